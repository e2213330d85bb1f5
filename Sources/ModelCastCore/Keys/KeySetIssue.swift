import Foundation
import ModelCastFormat

/// Makes the next signed key set of a target: version 1 (`keys create`) or the version
/// after the current one (`keys rotate`), and proves it before anything is written: a
/// first key set must carry its own root threshold, a next one must pass
/// `KeySetChain.step` from the current one, exactly as a client checks it.
package enum KeySetIssue {
    /// Key set 1 with `root` and `manifest`, expiring at `expiresAt`, signed by `signers`
    /// (root keys of the set, at least its root threshold of them).
    package static func first(root: KeySetRole, manifest: KeySetRole, expiresAt: Date, sequenceFloor: Int64?,
                              signers: [MinisignSecretKey]) throws -> SignedKeySet {
        let keySet = try KeySet(version: 1, expiresAt: expiresAt, root: root, manifest: manifest, sequenceFloor: sequenceFloor)
        try refuseStrangers(signers, allowed: root.keys)
        let signed = try SignedKeySet(keySet: keySet, roots: signers)
        let counted = KeySetChainReader.signers(signed.signatures, bytes: signed.bytes, of: keySet, roots: root.keys)
        guard counted.count >= root.threshold else {
            throw KeySetError.thresholdNotMet(path: keySet.path, role: .root, keySetVersion: 1, threshold: root.threshold, signers: counted, problems: [])
        }
        return signed
    }

    /// The key set after `current` with `changes` applied, signed by `signers`. Refuses it
    /// (before anything is written) unless `KeySetChain.step` accepts it: at least the
    /// current root threshold and the new root threshold signed.
    package static func next(after current: KeySet, changes: KeySetChanges, expiresAt: Date, liveSequence: Int64?,
                             signers: [MinisignSecretKey]) throws -> SignedKeySet {
        let keySet = try changes.apply(to: current, expiresAt: expiresAt, liveSequence: liveSequence)
        try refuseStrangers(signers, allowed: current.root.keys + keySet.root.keys)
        let signed = try SignedKeySet(keySet: keySet, roots: signers)
        _ = try KeySetChain.step(trusted: current, nextBytes: signed.bytes, nextSignatures: signed.signatures, ed25519: KeySetChainReader.ed25519)
        return signed
    }

    /// A signing key that is no root key of the sets involved would add a signature that
    /// counts for nothing: refused, naming it, so a wrong file is noticed.
    private static func refuseStrangers(_ signers: [MinisignSecretKey], allowed: [MinisignPublicKey]) throws {
        for signer in signers where !allowed.contains(where: { $0.keyID == signer.keyID && $0.key == signer.publicKey.key }) {
            throw ModelCastError.usage("--sign-root key \(signer.keyID.hex) is not a root key of the key set (root keys: \(allowed.map(\.keyID.hex).joined(separator: ", ")))")
        }
    }
}

/// What `keys rotate` changes from the current key set: keys added to either role, keys
/// removed (revoked) from either role by key id, new thresholds, an explicit sequence floor.
package struct KeySetChanges: Sendable {
    package var addRoots: [MinisignPublicKey] = []
    package var addManifestKeys: [MinisignPublicKey] = []
    package var revoke: [MinisignKeyID] = []
    package var rootThreshold: Int?
    package var manifestThreshold: Int?
    package var sequenceFloor: Int64?

    package init() {}

    /// The next key set. Thresholds stay as they were unless given: a revocation that leaves
    /// fewer keys than the threshold is refused rather than lowering it silently. A revoked id the current set does not list, and a key added that it
    /// already lists, are refused (a typo must not pass as a rotation). When a manifest key
    /// leaves, `sequence_floor` is the explicit floor or `liveSequence` (the genuine live
    /// release's), so manifests older than the rotation stay refused after a client resets
    /// a floor a leaked key may have raised; otherwise it is the explicit floor or the
    /// current set's.
    func apply(to current: KeySet, expiresAt: Date, liveSequence: Int64?) throws -> KeySet {
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
        let floor = sequenceFloor ?? (removesManifestKey ? liveSequence ?? 0 : current.sequenceFloor)
        return try KeySet(version: current.version + 1, expiresAt: expiresAt, root: root, manifest: manifest, sequenceFloor: floor)
    }
}
