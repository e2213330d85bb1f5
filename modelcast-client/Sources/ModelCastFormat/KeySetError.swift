import Foundation

/// Why a key set, the link to it, or a manifest under it is not trusted. Each case carries
/// the values involved; `message` is the one line shown to people.
public enum KeySetError: Error, Equatable, Sendable {
    /// The document at `path` breaks a rule of the format (`error` names the field).
    case invalidDocument(path: String, error: ManifestValueError)
    /// The document fetched as the version after `trusted` says it is `found`.
    case versionGap(path: String, trusted: Int64, found: Int64)
    /// Fewer than `threshold` distinct keys of key set `keySetVersion`'s `role` made a valid
    /// signature over `path`: `signers` did; `problems` says what was wrong with the others.
    case thresholdNotMet(path: String, role: KeySetRoleName, keySetVersion: Int64, threshold: Int,
                         signers: [MinisignKeyID], problems: [KeySetSignatureProblem])
    /// The newest key set expired at `expiresAt` (it is `now`): a client trusts no manifest
    /// under it until a newer key set is published.
    case expired(path: String, expiresAt: String, now: String)

    /// The one-line message shown to the user.
    public var message: String {
        switch self {
        case let .invalidDocument(path, error):
            return "key set \(path): \(error.description)"
        case let .versionGap(path, trusted, found):
            return "key set \(path) says version \(found); the version after \(trusted) must be \(trusted + 1) (key sets are walked one version at a time)"
        case let .thresholdNotMet(path, role, keySetVersion, threshold, signers, problems):
            let who = signers.isEmpty ? "none" : signers.map(\.hex).joined(separator: ", ")
            let why = problems.isEmpty ? "" : "; " + problems.map(\.description).joined(separator: "; ")
            return "\(path) is signed by \(signers.count) of key set \(keySetVersion)'s \(role) keys (\(who)); it needs \(threshold)\(why)"
        case let .expired(path, expiresAt, now):
            return "key set \(path) expired at \(expiresAt) (now \(now)): publish a newer key set signed by the root keys"
        }
    }
}

extension KeySetError: LocalizedError, CustomStringConvertible {
    public var errorDescription: String? { message }
    public var description: String { message }
}

/// A signature that did not count towards a threshold, and why.
public struct KeySetSignatureProblem: Equatable, Sendable, CustomStringConvertible {
    /// Why a signature did not count.
    public enum Reason: Equatable, Sendable {
        /// Its key id is none of the role's keys.
        case notARoleKey
        /// A key already counted signed again; it counts once.
        case repeatedKey
        /// It does not verify (altered data or comment, a legacy signature): the format's error.
        case invalid(FormatError)
        /// It verifies, but its trusted comment does not bind this document (`detail` says how).
        case commentMismatch(String)
    }

    /// The key id the signature names.
    public let keyID: MinisignKeyID
    /// Why it did not count.
    public let reason: Reason

    /// A problem with the signature by `keyID`.
    public init(keyID: MinisignKeyID, reason: Reason) {
        self.keyID = keyID
        self.reason = reason
    }

    /// "key id ABC: …".
    public var description: String {
        switch reason {
        case .notARoleKey: return "key id \(keyID.hex) is not one of its keys"
        case .repeatedKey: return "key id \(keyID.hex) signed more than once (counted once)"
        case .invalid(let error): return "key id \(keyID.hex): \(error.message)"
        case .commentMismatch(let detail): return "key id \(keyID.hex): \(detail)"
        }
    }
}
