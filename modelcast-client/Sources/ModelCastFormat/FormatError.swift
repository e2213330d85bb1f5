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

/// The text of a C `errno` value, e.g. "Permission denied".
public func errnoDescription(_ code: Int32 = errno) -> String {
    String(cString: strerror(code))
}

/// True when `text` holds a C0 control character or DEL (U+0000–U+001F, U+007F).
public func containsControlCharacter(_ text: String) -> Bool {
    text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
}

/// `text` with every control character written as an escape (`\n`, `\t`, `\r`,
/// `\u{1B}`), so a message naming it stays on one line and shows what is there.
public func escapingControlCharacters(_ text: String) -> String {
    var result = ""
    for scalar in text.unicodeScalars {
        switch scalar.value {
        case 0x0A: result += "\\n"
        case 0x09: result += "\\t"
        case 0x0D: result += "\\r"
        case 0..<0x20, 0x7F: result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
        default: result.unicodeScalars.append(scalar)
        }
    }
    return result
}

