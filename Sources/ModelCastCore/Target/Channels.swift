import Foundation

/// Release channels: one target holds several, each with its own manifest, history and
/// sequence, all sharing the immutable artifacts under `models/`.
///
/// `stable` is the manifest key itself (`manifest.json`); any other channel NAME lives at
/// `channels/NAME/<manifest key>` (`channels/beta/manifest.json`), with its history under
/// `manifests/channels/NAME/<stem>/` and its own history index. `channels/` is reserved:
/// no `--manifest-key` may start with it.
package enum Channels {
    /// The channel a target serves at the manifest key itself.
    package static let stable = TargetKeys.stableChannel
    /// Where every other channel's manifest lives.
    static let folder = TargetKeys.channelsFolder

    /// A channel name: `[a-z0-9][a-z0-9-]*`, at most 64 characters.
    package static func validate(_ name: String) throws {
        // try?: refused just below, naming the value and the rule.
        guard (try? ChannelName(name)) != nil else {
            throw ModelCastError.usage("channel \(quotedValue(name)) must be lowercase letters, digits and '-', starting with a letter or digit (at most 64 characters), e.g. beta")
        }
    }

    /// The manifest key of `channel` for the target's manifest key `base`.
    package static func manifestKey(channel: String, base: String = "manifest.json") -> String {
        TargetKeys.manifestKey(channel: channel, base: base)
    }

    /// The channel a manifest key belongs to and the target's manifest key it derives from:
    /// `channels/beta/manifest.json` → (beta, manifest.json); any other key is stable's.
    package static func split(manifestKey: String) -> (channel: String, base: String) {
        TargetKeys.split(manifestKey: manifestKey)
    }

    /// Every channel with a live manifest in the target, `stable` first, the others by name.
    /// One HEAD and one listing of `channels/` (which holds only manifests and signatures).
    package static func list(_ storage: any Storage, base: String = "manifest.json") async throws -> [String] {
        var names: [String] = []
        if try await storage.head(base) != nil { names.append(stable) }
        var others = Set<String>()
        for key in try await storage.list(prefix: folder) {
            let (channel, keyBase) = split(manifestKey: key)
            // try?: a folder under channels/ whose name is no channel is not one: skipped.
            if channel != stable, keyBase == base, (try? validate(channel)) != nil { others.insert(channel) }
        }
        return names + others.sorted()
    }

    /// The manifest keys of every channel but the one at `manifestKey`, for what must cover
    /// them all (hosting files, prune).
    static func otherManifestKeys(_ storage: any Storage, besides manifestKey: String) async throws -> [String] {
        let base = split(manifestKey: manifestKey).base
        return try await list(storage, base: base).map { Self.manifestKey(channel: $0, base: base) }.filter { $0 != manifestKey }
    }
}
