import Foundation

/// A key set: the document `keys/N.json` of a target, which names the root keys (offline;
/// they sign the next key set) and the manifest keys (online; they sign manifests), each
/// with a threshold, and an expiry. Version N+1 is trusted only when a threshold of version
/// N's root keys and a threshold of its own signed it (`KeySetChain`).
///
///     {
///       "expires_at": "2027-11-29T00:00:00Z",
///       "format": "modelcast-keys",
///       "format_version": 1,
///       "manifest": {"keys": ["RWQ…"], "threshold": 1},
///       "root": {"keys": ["RWQ…", "RWQ…"], "threshold": 2},
///       "sequence_floors": {"beta": 57, "stable": 41},
///       "version": 2
///     }
///
/// A value of this type holds only what the rules allow: a version from 1 to 2^53, an
/// expiry in whole seconds (UTC), two valid roles that share no key, and at most 64
/// channels' sequence floors, each from 0 to 2^53.
public struct KeySet: Sendable, Equatable {
    /// The `format` field's only value.
    public static let formatName = "modelcast-keys"
    /// The `format_version` this reader reads.
    public static let formatVersion: Int64 = 1
    /// The largest document read, in bytes (64 KiB); a larger one is refused unparsed.
    public static let maxBytes = 64 << 10
    /// The highest version (and sequence floor): 2^53, exact in JSON and in a double.
    public static let maxNumber: Int64 = 1 << 53
    /// The most channels `sequence_floors` names.
    public static let maxChannelFloors = 64

    /// The key set's version, 1…2^53.
    public let version: Int64
    /// When the key set stops being trusted as the newest (whole seconds).
    public let expiresAt: Date
    /// The keys that sign the next key set, and how many must.
    public let root: KeySetRole
    /// The keys that sign manifests, and how many must.
    public let manifest: KeySetRole
    /// Per channel, the lowest manifest sequence a client accepts once this key set's
    /// manifest keys replace keys it no longer lists (`KeySetChain.sequenceFloor(after:next:channel:)`).
    /// Each channel has its own sequence, so each has its own floor; a channel not named
    /// here has floor 0. Empty when the document has no `sequence_floors`.
    public let sequenceFloors: [ChannelName: Int64]

    /// Checks every rule of the type; errors name the document field.
    public init(version: Int64, expiresAt: Date, root: KeySetRole, manifest: KeySetRole, sequenceFloors: [ChannelName: Int64] = [:]) throws {
        guard (1...Self.maxNumber).contains(version) else {
            throw ManifestValueError(field: "version", value: String(version), rule: "is not a key set version (1 to 2^53)")
        }
        let seconds = expiresAt.timeIntervalSince1970.rounded(.down)
        let whole = Date(timeIntervalSince1970: seconds)
        let text = formatTimestamp(whole)
        guard parseTimestamp(text) == whole, text.utf8.count == 20 else {
            throw ManifestValueError(field: "expires_at", value: quotedValue(text), rule: "is not a time from year 0001 to 9999")
        }
        guard sequenceFloors.count <= Self.maxChannelFloors else {
            throw ManifestValueError(field: "sequence_floors", value: "\(sequenceFloors.count) channels", rule: "names more than \(Self.maxChannelFloors) channels")
        }
        for (channel, floor) in sequenceFloors where !(0...Self.maxNumber).contains(floor) {
            throw ManifestValueError(field: "sequence_floors.\(channel)", value: String(floor), rule: "is not a manifest sequence (0 to 2^53)")
        }
        // A manifest key that is also a root key would let the machine that publishes (where
        // manifest keys live) sign key sets too: the leak the root role exists to survive.
        for (index, key) in manifest.keys.enumerated() where root.keys.contains(where: { $0.keyID == key.keyID || $0.key == key.key }) {
            throw ManifestValueError(field: "manifest.keys[\(index)]", value: quotedValue(key.base64),
                                     rule: "is also a root key: root keys stay offline and sign only key sets")
        }
        self.version = version
        self.expiresAt = whole
        self.root = root
        self.manifest = manifest
        self.sequenceFloors = sequenceFloors
    }

    /// The sequence floor of `channel`'s manifest: 0 when the document names no floor for it.
    public func sequenceFloor(channel: ChannelName) -> Int64 { sequenceFloors[channel] ?? 0 }

    /// `expires_at` as the document writes it: `2027-11-29T00:00:00Z`.
    public var expiresAtText: String { formatTimestamp(expiresAt) }

    /// Where this key set lives under a target's root: `keys/N.json`.
    public var path: String { Self.path(version: version) }

    /// Where key set `version` lives under a target's root: `keys/N.json` (plain decimal, so
    /// a client builds the next one's URL without a listing).
    public static func path(version: Int64) -> String { "\(folder)\(version).json" }

    /// The folder of a target that holds its key sets and their signatures: `keys/`.
    public static let folder = "keys/"

    /// Whether the key set has expired at `now` (its expiry is not after `now`). Only the
    /// newest key set a client trusts must be fresh: one a newer version replaced may have
    /// expired since.
    public func isExpired(at now: Date) -> Bool { expiresAt <= now }

    /// Refuses a key set expired at `now` (`KeySetError.expired`): a client that cannot reach a
    /// fresh key set stops trusting the stale one rather than being frozen on it.
    public func checkFresh(at now: Date) throws {
        if isExpired(at: now) { throw KeySetError.expired(path: path, expiresAt: expiresAtText, now: formatTimestamp(now)) }
    }
}
