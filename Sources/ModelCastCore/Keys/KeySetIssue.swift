import Foundation
import ModelCastFormat

/// Makes the next key set of a target, version 1 (`keys create`) or the version after the
/// current one (`keys rotate`), signed by the root keys at hand, and proves a key set
/// before it goes on a target: a first key set must carry its own root threshold, a next
/// one must pass `KeySetChain.step` from the current one, exactly as a client checks it.
/// Making and proving are apart because a pending version (`--out`, roots held by
/// different people) is written before it is proven.
package enum KeySetIssue {
    /// Key set 1 with `root` and `manifest`, expiring at `expiresAt`, signed by `signers`
    /// (root keys of the set; any number, even none, before `prove`).
    package static func first(root: KeySetRole, manifest: KeySetRole, expiresAt: Date, sequenceFloors: [ChannelName: Int64],
                              signers: [MinisignSecretKey]) throws -> SignedKeySet {
        let keySet = try KeySet(version: 1, expiresAt: expiresAt, root: root, manifest: manifest, sequenceFloors: sequenceFloors)
        try refuseStrangers(signers, of: keySet, previous: nil)
        return try SignedKeySet(keySet: keySet, roots: signers)
    }

    /// The key set after `current` with `changes` applied, signed by `signers` (root keys
    /// of either set; any number, even none, before `prove`).
    package static func next(after current: KeySet, changes: KeySetChanges, expiresAt: Date, liveSequences: [ChannelName: Int64],
                             signers: [MinisignSecretKey]) throws -> SignedKeySet {
        let keySet = try changes.apply(to: current, expiresAt: expiresAt, liveSequences: liveSequences)
        try refuseStrangers(signers, of: keySet, previous: current)
        return try SignedKeySet(keySet: keySet, roots: signers)
    }

    /// Refuses `signed` unless a client that trusts `previous` (nil: nothing before it, so
    /// `signed` must be version 1) would accept it: the version after `previous`, at least
    /// `previous`'s root threshold and its own signed it, every signature bound to it.
    /// Throws `KeySetError` naming what is missing.
    package static func prove(_ signed: SignedKeySet, after previous: KeySet?) throws {
        guard let previous else {
            let keySet = signed.keySet
            guard keySet.version == 1 else { throw KeySetError.versionGap(path: keySet.path, trusted: 0, found: keySet.version) }
            let counted = KeySetChainReader.signers(signed.signatures, bytes: signed.bytes, of: keySet, roots: keySet.root.keys)
            guard counted.count >= keySet.root.threshold else {
                throw KeySetError.thresholdNotMet(path: keySet.path, role: .root, keySetVersion: 1, threshold: keySet.root.threshold,
                                                  signers: counted, problems: [])
            }
            return
        }
        _ = try KeySetChain.step(trusted: previous, nextBytes: signed.bytes, nextSignatures: signed.signatures, ed25519: KeySetChainReader.ed25519)
    }

    /// The root keys whose signatures count for `keySet`: its own and, after version 1,
    /// those of the version before it (a key both list, once).
    package static func roots(of keySet: KeySet, previous: KeySet?) -> [MinisignPublicKey] {
        let earlier = previous?.root.keys ?? []
        return earlier + keySet.root.keys.filter { key in !earlier.contains { $0.keyID == key.keyID } }
    }

    /// A signing key that is no root key of the sets involved would add a signature that
    /// counts for nothing: refused, naming it, so a wrong file is noticed.
    package static func refuseStrangers(_ signers: [MinisignSecretKey], of keySet: KeySet, previous: KeySet?) throws {
        let allowed = roots(of: keySet, previous: previous)
        let sets = previous.map { "key set \(keySet.version) or \($0.version)" } ?? "key set \(keySet.version)"
        for signer in signers where !allowed.contains(where: { $0.keyID == signer.keyID && $0.key == signer.publicKey.key }) {
            throw ModelCastError.usage("--sign-root key \(signer.keyID.hex) is not a root key of \(sets) (root keys: \(allowed.map(\.keyID.hex).joined(separator: ", ")))")
        }
    }
}

/// What `keys rotate` changes from the current key set: keys added to either role, keys
/// removed (revoked) from either role by key id, new thresholds, explicit sequence floors.
package struct KeySetChanges: Sendable {
    package var addRoots: [MinisignPublicKey] = []
    package var addManifestKeys: [MinisignPublicKey] = []
    package var revoke: [MinisignKeyID] = []
    package var rootThreshold: Int?
    package var manifestThreshold: Int?
    /// Floors given with `--sequence-floor [CHANNEL=]N`; they replace the computed ones.
    package var sequenceFloors: [ChannelName: Int64] = [:]

    package init() {}

    /// The next key set. Thresholds stay as they were unless given: a revocation that leaves
    /// fewer keys than the threshold is refused rather than lowering it silently. A revoked id the current set does not list, and a key added that it
    /// already lists, are refused (a typo must not pass as a rotation). When a manifest key
    /// leaves, `sequence_floors` holds each channel's live sequence (`liveSequences`, the
    /// genuine live releases'), so manifests older than the rotation stay refused after a
    /// client resets a floor a leaked key may have raised; otherwise the current floors carry
    /// forward (clients cap a floor rebuilt after a lost state by them). Explicit floors
    /// replace either.
    func apply(to current: KeySet, expiresAt: Date, liveSequences: [ChannelName: Int64]) throws -> KeySet {
        for id in revoke where current.root.key(id) == nil && current.manifest.key(id) == nil {
            throw ModelCastError.usage("--revoke \(id.hex): key set \(current.version) has no key with that id (root: \(current.root.keys.map(\.keyID.hex).joined(separator: ", ")); manifest: \(current.manifest.keys.map(\.keyID.hex).joined(separator: ", ")))")
        }
        for key in addRoots + addManifestKeys where current.root.keys.contains(where: { $0.keyID == key.keyID }) || current.manifest.keys.contains(where: { $0.keyID == key.keyID }) {
            throw ModelCastError.usage("key \(key.keyID.hex) is already in key set \(current.version): give only new keys with --root and --manifest-key")
        }
        let roots = current.root.keys.filter { !revoke.contains($0.keyID) } + addRoots
        let manifestKeys = current.manifest.keys.filter { !revoke.contains($0.keyID) } + addManifestKeys
        let root = try KeySetRole(keys: roots, threshold: rootThreshold ?? current.root.threshold, field: "root")
        let manifest = try KeySetRole(keys: manifestKeys, threshold: manifestThreshold ?? current.manifest.threshold, field: "manifest")
        let removesManifestKey = current.manifest.keys.contains { !manifest.contains($0) }
        // Kept when no manifest key leaves: clients reset nothing then, but they cap a floor
        // rebuilt from version records by the newest key set's floor, and that cap must not go.
        let floors = (removesManifestKey ? liveSequences : current.sequenceFloors).merging(sequenceFloors) { $1 }
        return try KeySet(version: current.version + 1, expiresAt: expiresAt, root: root, manifest: manifest, sequenceFloors: floors)
    }
}
