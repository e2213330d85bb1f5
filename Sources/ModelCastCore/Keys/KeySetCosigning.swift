import Foundation
import ModelCastFormat

/// `keys sign`: adds root signatures to a pending key set version, for roots held by
/// different people. The document is never rewritten; each key that signs must be a root
/// key of the version or of the one before it, and every signature already there must
/// verify, so a changed document or a stranger's signature is noticed before more are added.
package enum KeySetCosigning {
    /// What signing did: the key set with every signature now, the keys whose signatures
    /// were added, and those that had signed already (nothing to add: signing is idempotent).
    package struct Outcome: Sendable {
        package let signed: SignedKeySet
        package let added: [MinisignKeyID]
        package let alreadySigned: [MinisignKeyID]
    }

    /// The version `pending` follows, read from `given` (`--previous`) or else from
    /// `N-1.json` beside it; nil for version 1. Refuses a missing file (`MissingSetting`, exit 2,
    /// when none was given, naming `--previous`), one that is no key set, and one that is not
    /// version N-1. Its signatures are not checked: it only says which root keys may sign
    /// and which thresholds count; `keys push` proves the version against the target's own.
    package static func previous(for pending: PendingKeySet, given: String?) throws -> KeySet? {
        let version = pending.keySet.version
        guard version > 1 else {
            if let given { throw ModelCastError.usage("--previous \(PendingKeySet.shown(given)): key set 1 follows no version") }
            return nil
        }
        let path: String
        if let given {
            path = given
        } else {
            let directory = PathText.parent(pending.path)
            path = (directory.isEmpty ? "" : directory + "/") + "\(version - 1).json"
            guard FileManager.default.fileExists(atPath: path) else {
                throw MissingSetting("\(PendingKeySet.shown(pending.path)) follows key set \(version - 1), which is not beside it (\(PendingKeySet.shown(path))): give it with --previous FILE (the target's keys/\(version - 1).json)")
            }
        }
        let bytes = try PendingKeySet.readLocal(path, limit: KeySet.maxBytes, what: "a key set")
        let previous: KeySet
        do { previous = try KeySet(parsing: bytes) } catch let error as ManifestValueError {
            throw KeySetError.invalidDocument(path: PendingKeySet.shown(path), error: error)
        }
        guard previous.version == version - 1 else {
            throw PendingKeySetError.wrongPrevious(path: PendingKeySet.shown(path), found: previous.version, expected: version - 1)
        }
        return previous
    }

    /// `pending` with a signature by each of `keys` that has not signed it yet. Refuses a
    /// key that is no root key of the version or of `previous`, a key given twice, and a
    /// pending version whose signatures do not all verify. Writes nothing.
    package static func sign(_ pending: PendingKeySet, previous: KeySet?, with keys: [MinisignSecretKey]) throws -> Outcome {
        let keySet = pending.keySet
        try KeySetIssue.refuseStrangers(keys, of: keySet, previous: previous)
        try pending.checkSignatures(roots: KeySetIssue.roots(of: keySet, previous: previous))
        var signatures = pending.signed.signatures
        var added: [MinisignSignature] = []
        var already: [MinisignKeyID] = []
        for (index, key) in keys.enumerated() {
            guard !keys[..<index].contains(where: { $0.keyID == key.keyID }) else {
                throw ModelCastError.usage("--sign-root names root key \(key.keyID.hex) twice: each key counts once")
            }
            if signatures.contains(where: { $0.keyID == key.keyID }) {
                already.append(key.keyID)
                continue
            }
            let signature = try SignedKeySet.sign(keySet, bytes: pending.signed.bytes, with: key)
            added.append(signature)
            signatures.append(signature)
        }
        _ = try MinisignSignatureList(signatures, source: PendingKeySet.shown(pending.sigsPath))
        let signed = SignedKeySet(keySet: keySet, bytes: pending.signed.bytes, signatures: signatures, minisig: pending.signed.minisig ?? added.first)
        return Outcome(signed: signed, added: added.map(\.keyID), alreadySigned: already)
    }
}
