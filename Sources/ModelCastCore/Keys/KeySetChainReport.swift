import Foundation
import ModelCastFormat

/// A key set chain as `verify --json --trusted-keys` and the release page show it: each
/// version with its thresholds, keys, expiry and signers, and who signed the manifest
/// under the newest. Key ids are hex as minisign prints them.
package struct KeySetChainReport: Codable, Sendable, Equatable {
    /// One version of the chain.
    package struct Version: Codable, Sendable, Equatable {
        package let version: Int64
        package let expiresAt: String
        /// Days from the moment shown to `expiresAt` (one decimal; negative once expired).
        package let daysLeft: Double
        package let root: Role
        package let manifest: Role
        /// The root keys whose signatures counted for it (of this set or the one before).
        package let signedBy: [String]
        /// True for the key set verify started from (`--trusted-keys`): trusted as given,
        /// so `signed_by` is empty.
        package let pinned: Bool
        /// Per channel, the sequence floor clients take when this set removes a manifest key;
        /// nil when the document names none.
        package let sequenceFloors: [String: Int64]?

        enum CodingKeys: String, CodingKey {
            case version, root, manifest, pinned
            case expiresAt = "expires_at", daysLeft = "days_left", signedBy = "signed_by", sequenceFloors = "sequence_floors"
        }
    }

    /// A role's threshold and keys.
    package struct Role: Codable, Sendable, Equatable {
        package let threshold: Int
        package let keys: [String]
    }

    /// Oldest first; the last is the key set in force.
    package let chain: [Version]
    /// True when the walk stopped at `KeySetChain.maxVersionsPerCheck` versions with more to read.
    package let truncated: Bool
    /// The newest set's manifest keys whose signatures over the manifest counted.
    package let manifestSigners: [String]
    /// How many the newest set requires.
    package let manifestThreshold: Int

    enum CodingKeys: String, CodingKey {
        case chain, truncated
        case manifestSigners = "manifest_signers", manifestThreshold = "manifest_threshold"
    }

    /// The report of `links` (oldest first; the first is `pinned` when it was trusted as
    /// given rather than checked) at `now`.
    package init(links: [KeySetLink], firstPinned: Bool, truncated: Bool, manifestSigners: [MinisignKeyID], now: Date) {
        chain = links.enumerated().map { index, link in
            let set = link.keySet
            return Version(version: set.version, expiresAt: set.expiresAtText,
                           daysLeft: (set.expiresAt.timeIntervalSince(now) / 8_640).rounded(.down) / 10,
                           root: Role(threshold: set.root.threshold, keys: set.root.keys.map(\.keyID.hex)),
                           manifest: Role(threshold: set.manifest.threshold, keys: set.manifest.keys.map(\.keyID.hex)),
                           signedBy: link.signers.map(\.hex), pinned: firstPinned && index == 0, 
                           sequenceFloors: set.sequenceFloors.isEmpty ? nil : Dictionary(uniqueKeysWithValues: set.sequenceFloors.map { ($0.key.rawValue, $0.value) }))
        }
        self.truncated = truncated
        self.manifestSigners = manifestSigners.map(\.hex)
        manifestThreshold = links.last?.keySet.manifest.threshold ?? 0
    }
}
