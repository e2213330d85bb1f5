// A small command-line "device" built on ModelCastClient: what an app does at launch. It
// speaks two forms.
//
// The conformance kit's client protocol (conformance/CLIENT-CLI.md), one call per process,
// everything kept under D:
//
//   modelcast-device init --dir D --manifest-url U [--public-key FILE]... [--model-signing-public-key FILE]
//                    [--app-version V] [--device-id ID] [--device k=v,...]... [--min-rate BYTES]
//                    [--rate-window SECONDS] [--deadline SECONDS] [--max-install BYTES] [--storage-budget BYTES]
//   modelcast-device update --dir D [--policy essential|prefetch|on-demand] [--request MODEL]...
//                    [--accept-licence MODEL]... [--network unmetered|cellular] [--charging yes|no] [--in-use MODEL]...
//   modelcast-device state --dir D
//   modelcast-device revert --dir D MODEL --reason TEXT
//
// `init` parses every value (reading the key files: their text is kept in D/device.json,
// not their paths) and writes D/device.json with one rename, or exits 2 having written
// nothing; it makes no request. `update` updates the models `--policy` covers (default:
// all) and installs each `--request`ed one (with `--request` alone, only those); first it
// accepts the licences `--accept-licence` names, reports the network and charging state and
// marks models in use; each model left waiting gets a `waiting: MODEL: REASON` line. `state`
// prints the protocol's JSON (conformance/state.schema.json): the sequence trusted, each
// model's version, variant, files hashed from the disk now, kept versions and refusal.
// `revert` goes back to the previous kept version and refuses the one it ran. `update`,
// `state` and `revert` on a directory `init` never configured exit 3.
//
// The one-shot form, every setting on the command line:
//
//   modelcast-device --manifest URL --dir DIR [--device-id ID] [--public-key KEY]...
//                    [--model-signing-public-key FILE] [--app-version V] [--keep N] [--check]
//                    [--memory BYTES] [--platform P] [--os-version V] [--arch A]
//                    [--accelerator A]... [--capability C]...
//                    [--policy essential|prefetch|on-demand] [--download-policy MODEL=POLICY]...
//                    [--request MODEL]... [--max-download BYTES]
//   modelcast-device revert MODEL --reason TEXT --manifest URL --dir DIR
//
// It fetches the manifest, proves it (signature, expiry, sequence), downloads what is
// missing (resuming a partial download), installs it atomically and prints what it runs.
// The device flags describe the device its variants are chosen for (the rest is this
// machine's); `--policy` updates the models of that download policy, `--request` installs
// those models now, `--max-download` defers an update that would download more;
// `--model-signing-public-key` installs only versions whose OpenSSF model signature that
// PEM key verifies; `revert` goes back to the previous version of MODEL and refuses the one it ran.
//
// Both forms exit 0 when done, 1 when a rule refused (a signature, an expiry, a replay, a
// digest, a size, a missing kept version…), 2 for a usage mistake, 3 when the network or
// the disk failed (ExitStatus.swift); on failure stderr's last line is
// `modelcast-device: <reason>`, control characters escaped.
import Foundation

let words = Array(CommandLine.arguments.dropFirst())
// `revert` with `--manifest` is the one-shot form's, which came first.
if let subcommand = words.first, ProtocolCall.subcommands.contains(subcommand), !(subcommand == "revert" && words.contains("--manifest")) {
    await ProtocolCall.run(subcommand, words.dropFirst())
}
await OneShot.run(words)
