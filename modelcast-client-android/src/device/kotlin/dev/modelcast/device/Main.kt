// A small command-line "device" built on the Kotlin client (dev.modelcast.client): what an
// app does at launch, the twin of examples/device (modelcast-device), with the same forms,
// output lines and exit statuses, so a script written for one runs the other.
//
// The conformance kit's client protocol (conformance/CLIENT-CLI.md), one call per process,
// everything kept under D:
//
//   device init --dir D --manifest-url U [--public-key FILE]... | [--trusted-keys FILE] [--model-signing-public-key FILE]
//               [--app-version V] [--device-id ID] [--device k=v,...]... [--min-rate BYTES]
//               [--rate-window SECONDS] [--deadline SECONDS] [--max-install BYTES]
//   device update --dir D [--policy essential|prefetch|on-demand] [--request MODEL]...
//   device state --dir D
//   device revert --dir D MODEL --reason TEXT
//
// The one-shot form, every setting on the command line:
//
//   device --manifest URL --dir DIR [--device-id ID] [--public-key KEY]...
//          [--model-signing-public-key FILE] [--app-version V] [--keep N] [--check]
//          [--memory BYTES] [--platform P] [--os-version V] [--arch A]
//          [--accelerator A]... [--capability C]...
//          [--policy essential|prefetch|on-demand] [--download-policy MODEL=POLICY]...
//          [--request MODEL]... [--max-download BYTES]
//   device revert MODEL --reason TEXT --manifest URL --dir DIR
//
// Both forms exit 0 when done, 1 when a rule refused, 2 for a usage mistake, 3 when the
// network or the disk failed (ExitStatus.kt); on failure stderr's last line is
// `modelcast-device: <reason>`, control characters escaped.
package dev.modelcast.device

fun main(args: Array<String>) {
    val words = args.toList()
    val subcommand = words.firstOrNull()
    // `revert` with `--manifest` is the one-shot form's, which came first.
    if (subcommand != null && subcommand in ProtocolCall.subcommands && !(subcommand == "revert" && "--manifest" in words)) {
        ProtocolCall.run(subcommand, words.drop(1))
    }
    OneShot.run(words)
}
