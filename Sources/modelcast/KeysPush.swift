import ArgumentParser
import Foundation
import ModelCastCore

extension ModelCast {
    struct KeysPush: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "push",
            abstract: "Upload a key set version signed offline, once its link to the target's newest is proven.",
            discussion: """
                FILE is DIR/keys/N.json with FILE.minisig and FILE.sigs (keys rotate --out, \
                keys sign). Refused, with nothing written, unless N is the target's newest key \
                set version + 1, the threshold of the newest set's root keys and of its own \
                signed it, every signature verifies, and it has not expired. The upload is \
                create-only, the signatures before the document.
                More options: modelcast keys push --help-hidden
                Details: docs/cli.md#keys-push
                """
        )

        @Argument(help: ArgumentHelp("Target: a published directory or s3://bucket/prefix.", valueName: "TARGET"))
        var target: String

        @Argument(help: ArgumentHelp("The signed key set: DIR/keys/N.json.", valueName: "FILE"))
        var file: String

        @Flag(help: "Print a JSON summary instead of text.")
        var json = false

        @OptionGroup(title: "S3 targets")
        var s3: S3ConnectionOptions

        func run() async throws {
            let environment = ProcessInfo.processInfo.environment
            let pending = try PendingKeySet.load(path: file)
            let output = try await withStorage(s3.settings(for: target), environment: environment) { storage in
                let pushed = try await KeySetPush.push(pending, to: storage, now: Date())
                var output = KeySetOutput(target: storage.location, signed: pushed.signed, tally: KeySetTally(pushed.signed, previous: pushed.previous))
                output.onTarget = true
                return output
            }
            if json { print(try JSONOutput.encode(output), terminator: "") } else { (["pushed \(output.path) to \(output.target) (version \(output.version), expires \(output.expiresAt))"] + output.details).forEach { print($0) } }
        }
    }
}
