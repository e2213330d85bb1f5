import ArgumentParser
import Foundation
import ModelCastCore

extension ModelCast {
    struct KeysSign: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sign",
            abstract: "Add root signatures to a pending key set version (roots held by different people).",
            discussion: """
                FILE is DIR/keys/N.json as keys rotate --out (or keys create --out) wrote it. \
                Adds each --sign-root key's signature to FILE.sigs (and writes FILE.minisig if \
                there is none); the document itself is never changed. Each key must be a root \
                key of version N or N-1, read from --previous or DIR/keys/(N-1).json. A key \
                that signed already adds nothing. Runs offline: no target is read.
                Details: docs/cli.md#keys-sign
                """
        )

        @Argument(help: ArgumentHelp("The pending key set: DIR/keys/N.json.", valueName: "FILE"))
        var file: String

        @OptionGroup
        var keys: RootKeyOptions

        @Option(help: ArgumentHelp("The key set FILE follows (default: N-1.json beside FILE).", valueName: "FILE"))
        var previous: String?

        @Flag(help: "Print a JSON summary instead of text.")
        var json = false

        func validate() throws {
            if keys.signRoot.isEmpty { throw ValidationError("give at least one --sign-root KEYFILE (a root secret key)") }
        }

        func run() async throws {
            let environment = ProcessInfo.processInfo.environment
            let pending = try PendingKeySet.load(path: file)
            let previous = try KeySetCosigning.previous(for: pending, given: previous)
            // The keys are decrypted only once the files are known to be a key set they may sign.
            let outcome = try KeySetCosigning.sign(pending, previous: previous, with: try keys.load(environment: environment))
            if let minisig = outcome.signed.minisig, !outcome.added.isEmpty {
                try pending.write(signatures: outcome.signed.signatures, minisig: minisig)
            }
            var output = KeySetOutput(target: file, signed: outcome.signed, tally: KeySetTally(outcome.signed, previous: previous))
            output.added = outcome.added.map(\.hex)
            output.alreadySigned = outcome.alreadySigned.map(\.hex)
            output.next = output.pending ? "more root key holders run modelcast keys sign \(shellWord(file)) --sign-root KEYFILE"
                : "modelcast keys push TARGET \(shellWord(file))"
            if json {
                print(try JSONOutput.encode(output), terminator: "")
                return
            }
            var first = outcome.added.isEmpty ? "nothing to add to \(file)" : "signed \(file) with \(outcome.added.map(\.hex).joined(separator: ", "))"
            first += " (key set version \(output.version), expires \(output.expiresAt))"
            if !outcome.alreadySigned.isEmpty { first += "; already signed by \(outcome.alreadySigned.map(\.hex).joined(separator: ", "))" }
            ([first] + output.details).forEach { print($0) }
        }
    }
}
