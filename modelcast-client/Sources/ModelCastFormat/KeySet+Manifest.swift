import Foundation

/// What a manifest's threshold check established: the distinct manifest keys whose
/// signatures counted, with each one's trusted comment, in the order of the signatures.
public struct ManifestThresholdProof: Sendable, Equatable {
    /// The counted signatures (at least the key set's manifest threshold of them).
    public let signers: [VerifiedSignature]
    /// Each counted signature's trusted comment, parsed; `comments[i]` is `signers[i]`'s.
    public let comments: [TrustedComment]

    /// The earliest expiry a counted comment signs (RFC 3339 as written), or nil when none
    /// expires. A manifest without `expires_at` may carry its expiry only here.
    public var earliestExpiry: String? {
        comments.compactMap(\.expiresAt).min { (parseTimestamp($0) ?? .distantPast) < (parseTimestamp($1) ?? .distantPast) }
    }
}

extension KeySet {
    /// Proves a manifest under this key set: at least `manifest.threshold` distinct manifest
    /// keys made a valid signature over exactly `bytes`, each with a trusted comment that
    /// binds the manifest as a single-key check does (`TrustedComment(parsing:)` reads it;
    /// `TrustedComment.mismatches(sequence:expiresAt:)` finds none against the manifest's
    /// own `sequence` and `expiresAt`; its `file` is `file`, as `TrustedComment.fileField`
    /// names the channel's manifest). `signatures` are `MANIFEST.minisig` and the entries
    /// of `MANIFEST.sigs`, in any order; repeats count once, and a signature that does not
    /// count fails nothing once the threshold is met. A key the key set no longer lists (a
    /// revoked one) does not count.
    ///
    /// A manifest that carries its signature inside (`InlineSignature`) gives it as `inline`:
    /// that member signs the manifest without it (`inline.bytes`), while `MANIFEST.minisig`
    /// and `MANIFEST.sigs` sign the bytes as served (`bytes`), which is what `minisign -V`
    /// checks. Both count, each key once.
    ///
    /// Throws `KeySetError.thresholdNotMet` naming who signed and why the others did not
    /// count. `allowLegacy` accepts `Ed` (unprehashed) signatures, as `verify
    /// --allow-legacy-signature` does; a device leaves it false.
    public func verifyManifest(
        bytes: Data, signatures: [MinisignSignature], inline: (bytes: Data, signature: MinisignSignature)? = nil,
        file: String, sequence: Int64?, expiresAt: String?, allowLegacy: Bool = false,
        ed25519: (_ signature: [UInt8], _ message: [UInt8], _ publicKey: [UInt8]) throws -> Bool
    ) throws -> ManifestThresholdProof {
        var comments: [MinisignKeyID: TrustedComment] = [:]
        func bind(_ verified: VerifiedSignature) -> String? {
            guard let comment = TrustedComment(parsing: verified.trustedComment) else {
                return "the trusted comment is not modelcast's (it binds no sequence): \(quotedValue(verified.trustedComment))"
            }
            if let problem = comment.mismatches(sequence: sequence, expiresAt: expiresAt).first { return problem }
            if comment.file != file { return "the signature is for \(quotedValue(comment.file)), not \(file)" }
            comments[verified.keyID] = comments[verified.keyID] ?? comment
            return nil
        }
        let threshold = KeySetThreshold(role: manifest)
        var count = KeySetThreshold.Count()
        if let inline {
            count = threshold.count([inline.signature], message: [UInt8](inline.bytes), source: file, allowLegacy: allowLegacy,
                                    ed25519: ed25519, bind: bind)
        }
        count = threshold.count(signatures, message: [UInt8](bytes), source: file, allowLegacy: allowLegacy, ed25519: ed25519,
                                bind: bind, counted: count)
        guard count.signers.count >= manifest.threshold else {
            throw KeySetError.thresholdNotMet(path: file, role: .manifest, keySetVersion: version, threshold: manifest.threshold,
                                              signers: count.signers.map(\.keyID), problems: count.problems)
        }
        return ManifestThresholdProof(signers: count.signers, comments: count.signers.map { comments[$0.keyID]! })
    }
}
