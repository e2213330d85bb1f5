import Foundation

/// What the shared format's readers refuse, on a device as in the CLI: a minisign key,
/// signature or comment, an inline signature, a model signature, a release record, or a
/// value (a percentage, a duration) that does not parse. Each message names the offending
/// value. The CLI's own failures (files, stores, targets) are Core's `FormatError`.
public enum FormatError: Error, Equatable, Sendable {
    /// A value that does not parse (a percentage, a rollout step, a duration), named in
    /// the message with what would.
    case invalidValue(String)
    /// A record read from a target (a history record, a manifest read back as a release,
    /// `_modelcast/objects.json`) that does not decode or has an unusable entry. `source`
    /// says which record and where it was read (e.g. "release record s3://b/…", a path).
    case invalidRecord(source: String, reason: String)
    /// An inline manifest signature that cannot be attached to a manifest, or that a
    /// manifest carries in a form that cannot be read.
    case invalidInlineSignature(String)
    /// A minisign public or secret key that cannot be read, parsed or used. `source`
    /// names where it came from (a path, an environment variable); `reason` never
    /// contains key material.
    case signingKey(source: String, reason: String)
    /// A comment that cannot go into a signature file (a line break, too long).
    /// `kind` is "trusted comment" or "untrusted comment".
    case invalidComment(kind: String, reason: String)
    /// A signature file that is not in minisign's format; `reason` names the line.
    case malformedSignature(source: String, reason: String)
    /// A signature made with an algorithm this verifier does not accept.
    case unsupportedSignatureAlgorithm(source: String, algorithm: String)
    /// The signature's key id matches none of the trusted public keys.
    case untrustedSigningKey(source: String, keyID: String, trustedKeyIDs: [String])
    /// The signature does not verify over the signed data.
    case signatureMismatch(source: String, keyID: String)
    /// The signature over the data verifies but the one over the trusted comment does not.
    case trustedCommentMismatch(source: String, keyID: String)
    /// A model signature (an OpenSSF model-signing Sigstore bundle) that cannot be read, is not
    /// in the supported form, or does not verify with the given key. `reason` names the field
    /// and the value.
    case invalidModelSignature(source: String, reason: String)

    /// The one-line message shown to the user.
    public var message: String {
        switch self {
        case .invalidValue(let message), .invalidInlineSignature(let message):
            return message
        case .invalidRecord(let source, let reason):
            return "cannot read \(source): \(reason)"
        case .signingKey(let source, let reason):
            return "minisign key \(source): \(reason)"
        case .invalidComment(let kind, let reason):
            return "invalid \(kind): \(reason)"
        case .malformedSignature(let source, let reason):
            return "malformed signature file \(source): \(reason)"
        case .unsupportedSignatureAlgorithm(let source, let algorithm):
            return "signature \(source) uses an unsupported algorithm: \(algorithm)"
        case .untrustedSigningKey(let source, let keyID, let trustedKeyIDs):
            let trusted = trustedKeyIDs.isEmpty ? "no public key was given" : "trusted key ids: " + trustedKeyIDs.joined(separator: ", ")
            return "signature \(source) was made with key id \(keyID), which is not a trusted key (\(trusted))"
        case .signatureMismatch(let source, let keyID):
            return "signature \(source) (key id \(keyID)) does not verify: the signed data was altered or the signature is for other data"
        case .trustedCommentMismatch(let source, let keyID):
            return "signature \(source) (key id \(keyID)): the trusted comment's signature does not verify (the trusted comment was altered)"
        case .invalidModelSignature(let source, let reason):
            return "model signature \(source): \(reason)"
        }
    }
}

extension FormatError: LocalizedError, CustomStringConvertible {
    public var errorDescription: String? { message }
    public var description: String { message }
}
