import Foundation

/// The rules a client (and `modelcast verify`) walks a target's key sets by, as pure
/// functions: no I/O, no clock but the one passed in.
///
/// A client starts from a key set it trusts (the one the app ships, or the newest it
/// verified before), fetches `keys/(N+1).json` and its `.sigs` until there is none, and
/// steps once per version with `step(trusted:nextBytes:nextSignatures:ed25519:)`. The
/// newest key set reached must not be expired (`KeySet.checkFresh(at:)`); one a newer
/// version replaced may be, as it is no longer relied on.
public enum KeySetChain {
    /// The most key set versions a client walks in one check. A longer chain is walked this
    /// many versions per check: the verified prefix is kept, and the next check continues
    /// from it, so each check's work stays bounded.
    public static let maxVersionsPerCheck = 32

    /// The next key set, when `nextBytes` (the document as served) is a valid key set whose
    /// version is `trusted.version + 1` and which at least `trusted.root.threshold` distinct
    /// root keys of `trusted` and at least its own `root.threshold` distinct root keys
    /// signed. A counted signature is a prehashed minisign signature over exactly
    /// `nextBytes` whose trusted comment binds the next document
    /// (`KeySetComment.mismatch(_:keySet:)`); legacy signatures never count. One signature
    /// can count for both sets (a root key both list).
    ///
    /// Expiry is not checked here: an intermediate key set may have expired since a newer
    /// one replaced it; check the newest with `KeySet.checkFresh(at:)`.
    ///
    /// `ed25519` checks one Ed25519 signature (signature, message, 32-byte key).
    public static func step(
        trusted: KeySet, nextBytes: Data, nextSignatures: [MinisignSignature],
        ed25519: (_ signature: [UInt8], _ message: [UInt8], _ publicKey: [UInt8]) throws -> Bool
    ) throws -> KeySet {
        let expected = trusted.version + 1
        let path = KeySet.path(version: expected)
        let next: KeySet
        do { next = try KeySet(parsing: nextBytes) } catch let error as ManifestValueError {
            throw KeySetError.invalidDocument(path: path, error: error)
        }
        guard next.version == expected else { throw KeySetError.versionGap(path: path, trusted: trusted.version, found: next.version) }
        let message = [UInt8](nextBytes)
        for (signer, label) in [(trusted, trusted.version), (next, next.version)] {
            let count = KeySetThreshold(role: signer.root).count(
                nextSignatures, message: message, source: path, allowLegacy: false, ed25519: ed25519,
                bind: { KeySetComment.mismatch($0.trustedComment, keySet: next) })
            guard count.signers.count >= signer.root.threshold else {
                throw KeySetError.thresholdNotMet(path: path, role: .root, keySetVersion: label, threshold: signer.root.threshold,
                                                  signers: count.signers.map(\.keyID), problems: count.problems)
            }
        }
        return next
    }

    /// The manifest sequence floor a client sets on moving from `previous` to `next` (two
    /// consecutive trusted key sets), or nil when it keeps the floor it has.
    ///
    /// The floor is reset exactly when `next`'s manifest keys lack a key `previous` listed
    /// (a key rotated out or revoked): a key that may have leaked may also have signed a
    /// manifest with a huge sequence (a fast-forward attack) that raised the floor; the new
    /// floor is `next`'s floor for the client's `channel` (0 when it names none), which
    /// `keys rotate` sets to that channel's genuine live sequence, so older manifests still
    /// cannot be replayed. Each channel has its own sequence and so its own floor: one number
    /// for every channel would either let a channel ahead of it replay or refuse a channel
    /// behind it. Adding a key, changing thresholds or root keys resets nothing.
    public static func sequenceFloor(after previous: KeySet, next: KeySet, channel: ChannelName) -> Int64? {
        resetsSequenceFloors(after: previous, next: next) ? next.sequenceFloor(channel: channel) : nil
    }

    /// Whether moving from `previous` to `next` resets every channel's sequence floor to
    /// `next`'s: exactly when `next`'s manifest keys lack a key `previous` listed.
    public static func resetsSequenceFloors(after previous: KeySet, next: KeySet) -> Bool {
        previous.manifest.keys.contains { !next.manifest.contains($0) }
    }
}
