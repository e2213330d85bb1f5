import Foundation

/// When a manifest whose live detached signature does not prove it may be proven by the
/// signature its release kept beside its history record (`TargetKeys.keptSignatureKey`).
/// ModelCastClient and `modelcast verify` both ask this, so `verify` never says devices
/// accept what they refuse.
public enum KeptSignatureLookup {
    /// The sequence whose kept signature to fetch: the manifest's own, when the live
    /// signature is another release's — its trusted comment, read here without being
    /// trusted, names another sequence. That is what a publish stopped between its
    /// signature and manifest writes leaves (or a cache that serves the two from different
    /// moments). nil for anything else (no sequence in the manifest, a signature that
    /// cannot be read, a comment modelcast did not write, a signature of this very
    /// release that fails): the manifest is then refused as it is.
    ///
    /// Only where to look is decided here: the kept signature must then prove the manifest
    /// by every rule the live one must meet.
    public static func sequence(manifestSequence: Int64?, liveSignatureFile: String) -> Int64? {
        // A live signature that does not parse names no kept one: the manifest is then
        // checked against it as it is, and refused by that check (see above).
        guard let manifestSequence, manifestSequence >= 1,
              let signature = try? MinisignSignature(fileContents: liveSignatureFile),
              let comment = TrustedComment(parsing: signature.trustedComment),
              comment.sequence != manifestSequence else { return nil }
        return manifestSequence
    }
}
