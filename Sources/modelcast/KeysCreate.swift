import ArgumentParser
import Foundation
import ModelCastCore

extension ModelCast {
    struct KeysCreate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract: "Write a target's first key set, keys/1.json, signed by its root keys.",
            discussion: """
                Refused when the target already has a key set, when a threshold exceeds its \
                keys, and when the --sign-root keys do not meet the root threshold. Nothing is \
                written unless the key set verifies. With --out DIR, fewer signatures are \
                allowed: add the others with keys sign, then keys push.
                More options: modelcast keys create --help-hidden
                Details: docs/cli.md#keys-create
                """
        )

        @OptionGroup
        var targetOptions: KeysTargetOptions

        @Option(name: .customLong("root"), help: ArgumentHelp("A root public key (offline; repeat for each).", valueName: "PUBFILE"))
        var roots: [String] = []

        @Option(help: ArgumentHelp("How many root keys must sign the next key set.", valueName: "M"))
        var rootThreshold: Int = 1

        @Option(name: .customLong("manifest-key"), help: ArgumentHelp("A manifest public key (signs manifests; repeat for each).", valueName: "PUBFILE"))
        var manifestKeys: [String] = []

        @Option(help: ArgumentHelp("How many manifest keys must sign a manifest.", valueName: "N"))
        var manifestThreshold: Int = 1

        @Option(help: ArgumentHelp("A channel's sequence floor (no CHANNEL=: stable; repeat per channel).", valueName: "[CHANNEL=]N"))
        var sequenceFloor: [String] = []

        @OptionGroup
        var signing: RootSigningOptions

        func validate() throws {
            if roots.isEmpty { throw ValidationError("give at least one --root PUBFILE (a root public key)") }
            if manifestKeys.isEmpty { throw ValidationError("give at least one --manifest-key PUBFILE (a manifest public key)") }
        }

        func run() async throws {
            let environment = ProcessInfo.processInfo.environment
            let root = try KeySetRole(keys: try loadPublicKeys(roots), threshold: rootThreshold, field: "root")
            let manifest = try KeySetRole(keys: try loadPublicKeys(manifestKeys), threshold: manifestThreshold, field: "manifest")
            let expiresAt = try signing.expiresAt()
            let settings = try targetOptions.settings(environment: environment)
            let output = try await withStorage(settings, environment: environment) { storage in
                if try await storage.head(KeySet.path(version: 1)) != nil {
                    throw ModelCastError.targetState("\(storage.location) already has a key set (\(KeySet.path(version: 1))): change it with modelcast keys rotate")
                }
                // The keys are decrypted only once the target is known to take a first key set.
                let signed = try KeySetIssue.first(root: root, manifest: manifest, expiresAt: expiresAt, sequenceFloors: try SequenceFloorOption.parse(sequenceFloor),
                                                   signers: try signing.loadRootKeys(environment: environment))
                let written = try await signing.write(signed, previous: nil, previousBytes: nil, to: storage, environment: environment)
                return keySetOutput(target: written, signed: signed, previous: nil, out: signing.out, targetArgument: targetOptions.target)
            }
            if targetOptions.json { print(try JSONOutput.encode(output), terminator: "") } else { (["wrote \(output.path) to \(output.target) (version \(output.version), expires \(output.expiresAt))"] + output.details).forEach { print($0) } }
        }
    }
}
