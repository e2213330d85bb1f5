import ArgumentParser
import Foundation
import ModelCastCore

extension ModelCast {
    struct KeysRotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate",
            abstract: "Write the next key set: add or revoke keys, change thresholds, renew the expiry.",
            discussion: """
                Walks the target's key sets from keys/1.json, applies the changes to the newest \
                and writes the next version, signed by the --sign-root keys: at least the \
                current root threshold and the new one must sign (checked before anything is \
                written). Removing a manifest key sets each channel's sequence floor to its \
                live release's sequence. With --out DIR the files go under DIR, fewer signatures \
                allowed: others add theirs with keys sign, then keys push uploads it.
                More options: modelcast keys rotate --help-hidden
                Details: docs/cli.md#keys-rotate
                """
        )

        @OptionGroup
        var targetOptions: KeysTargetOptions

        @Option(name: .customLong("root"), help: ArgumentHelp("Add this root public key (repeat for each).", valueName: "PUBFILE"))
        var roots: [String] = []

        @Option(name: .customLong("manifest-key"), help: ArgumentHelp("Add this manifest public key (repeat for each).", valueName: "PUBFILE"))
        var manifestKeys: [String] = []

        @Option(help: ArgumentHelp("Remove the key with this key id, root or manifest (repeat for each).", valueName: "KEYID"))
        var revoke: [String] = []

        @Option(help: ArgumentHelp("How many root keys must sign the next key set (default: unchanged).", valueName: "M"))
        var rootThreshold: Int?

        @Option(help: ArgumentHelp("How many manifest keys must sign a manifest (default: unchanged).", valueName: "N"))
        var manifestThreshold: Int?

        @Option(help: ArgumentHelp("A channel's sequence floor (no CHANNEL=: stable; repeat per channel; docs/cli.md#keys-rotate).", valueName: "[CHANNEL=]N"))
        var sequenceFloor: [String] = []

        @OptionGroup
        var signing: RootSigningOptions

        func run() async throws {
            let environment = ProcessInfo.processInfo.environment
            var changes = KeySetChanges()
            changes.addRoots = try loadPublicKeys(roots)
            changes.addManifestKeys = try loadPublicKeys(manifestKeys)
            changes.revoke = try revoke.map { text in
                guard let id = MinisignKeyID(hex: text) else {
                    throw ModelCastError.usage("--revoke \(quotedValue(text)) is not a key id (up to 16 hexadecimal digits, as minisign prints it)")
                }
                return id
            }
            changes.rootThreshold = rootThreshold
            changes.manifestThreshold = manifestThreshold
            changes.sequenceFloors = try SequenceFloorOption.parse(sequenceFloor)
            let expiresAt = try signing.expiresAt()
            let settings = try targetOptions.settings(environment: environment)
            let output = try await withStorage(settings, environment: environment) { storage in
                let reader = KeySetChainReader(fetch: { try await storage.get($0, limit: $1) })
                guard let first = try await reader.first() else {
                    throw ModelCastError.targetState("\(storage.location) has no key set (\(KeySet.path(version: 1))): write the first with modelcast keys create")
                }
                // The engineer's own target: the whole chain, not a client's 32 per check.
                let current = try await reader.walk(from: first.keySet, maxVersions: Int.max).links.last ?? first
                // Every channel is its own sequence: each gets its live release's as its floor.
                var live: [ChannelName: Int64] = [:]
                for channel in try await Channels.list(storage) {
                    let key = Channels.manifestKey(channel: channel)
                    if let sequence = try await TargetState.load(from: storage, manifestKey: key).liveRecord?.sequence {
                        live[try ChannelName(channel)] = sequence
                    }
                }
                let signed = try KeySetIssue.next(after: current.keySet, changes: changes, expiresAt: expiresAt, liveSequences: live,
                                                  signers: try signing.loadRootKeys(environment: environment))
                let written = try await signing.write(signed, previous: current.keySet, previousBytes: current.bytes, to: storage, environment: environment)
                return keySetOutput(target: written, signed: signed, previous: current.keySet, out: signing.out, targetArgument: targetOptions.target)
            }
            if targetOptions.json { print(try JSONOutput.encode(output), terminator: "") } else { (["wrote \(output.path) to \(output.target) (version \(output.version), expires \(output.expiresAt))"] + output.details).forEach { print($0) } }
        }
    }
}
