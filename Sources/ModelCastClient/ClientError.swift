import Foundation

/// Why an update did not happen. The installed model is never touched by a failed update.
public enum ClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The server answered with this HTTP status.
    case http(url: String, status: Int)
    /// The connection failed or dropped (after the retries).
    case network(url: String, reason: String)
    /// The manifest is larger than `ClientConfiguration.maxManifestBytes`.
    case manifestTooLarge(url: String, limit: Int)
    /// The manifest is not a modelcast manifest this client reads.
    case invalidManifest(url: String, reason: String)
    /// Keys are configured and the manifest carries no signature.
    case unsigned(url: String)
    /// The signature is malformed, by an untrusted key, or does not match the manifest.
    case badSignature(url: String, reason: String)
    /// The manifest's `expires_at` (or its signed expiry) has passed: a frozen or replayed manifest.
    case expired(url: String, expiresAt: String, now: String)
    /// The manifest's sequence is lower than one this device already accepted (a replay).
    case replayed(url: String, sequence: Int64, highestAccepted: Int64)
    /// The release needs a newer app.
    case requiresNewerApp(minimum: String, current: String)
    /// A downloaded file's SHA-256 is not the manifest's.
    case hashMismatch(file: String, expected: String, actual: String)
    /// A server sent more (or, finally, fewer) bytes than the manifest's size.
    case sizeMismatch(file: String, expected: Int64, actual: Int64)
    /// A resumed download got an answer that does not continue the partial file.
    case badRangeResponse(url: String, reason: String)
    /// Not enough free space for the download and the install.
    case insufficientDiskSpace(needed: Int64, available: Int64)
    /// A zip whose entries could escape the model's directory or are not plain files.
    case unsafeArchive(file: String, reason: String)
    /// A local file operation failed.
    case io(path: String, reason: String)

    public var description: String {
        switch self {
        case .http(let url, let status): return "\(url): HTTP \(status)"
        case .network(let url, let reason): return "\(url): \(reason)"
        case .manifestTooLarge(let url, let limit): return "\(url): the manifest is larger than \(limit) bytes"
        case .invalidManifest(let url, let reason): return "\(url): not a usable modelcast manifest: \(reason)"
        case .unsigned(let url): return "\(url): the manifest is not signed, and this app trusts only signed manifests"
        case .badSignature(let url, let reason): return "\(url): bad signature: \(reason)"
        case .expired(let url, let expiresAt, let now): return "\(url): the manifest expired at \(expiresAt) (now \(now))"
        case .replayed(let url, let sequence, let highest): return "\(url): sequence \(sequence) is lower than \(highest), already accepted (a replayed manifest)"
        case .requiresNewerApp(let minimum, let current): return "the release needs app version \(minimum) or later; this is \(current)"
        case .hashMismatch(let file, let expected, let actual): return "\(file): SHA-256 \(actual), expected \(expected)"
        case .sizeMismatch(let file, let expected, let actual): return "\(file): \(actual) bytes, expected \(expected)"
        case .badRangeResponse(let url, let reason): return "\(url): cannot resume: \(reason)"
        case .insufficientDiskSpace(let needed, let available): return "\(needed) bytes of free space needed, \(available) available"
        case .unsafeArchive(let file, let reason): return "\(file): \(reason)"
        case .io(let path, let reason): return "\(path): \(reason)"
        }
    }
}

extension ClientError {
    /// A failure another attempt may get past (a download then resumes where it stopped).
    var isRetriable: Bool {
        switch self {
        case .network, .badRangeResponse: return true
        case .http(_, let status): return (500...599).contains(status)
        default: return false
        }
    }
}
