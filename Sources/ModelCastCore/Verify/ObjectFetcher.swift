import Foundation

/// A response as the verifier sees it.
package struct FetchResponse: Sendable {
    /// Final HTTP status (after redirects).
    package var status: Int
    /// Header fields by lower-cased name; repeated fields joined with ", ".
    package var headers: [String: String]
    /// Every redirect followed, as "STATUS FROM -> TO".
    package var redirects: [String]
    /// Body bytes handed to the consumer.
    package var bytesRead: Int64
    /// True when the body had more than the limit (reading stopped there).
    package var exceededLimit: Bool

    package init(status: Int, headers: [String: String], redirects: [String] = [], bytesRead: Int64, exceededLimit: Bool) {
        self.status = status
        self.headers = headers
        self.redirects = redirects
        self.bytesRead = bytesRead
        self.exceededLimit = exceededLimit
    }

    /// True for a 3xx answer with a Location: a redirect for the caller to check and follow.
    package var isRedirect: Bool { (300..<400).contains(status) && headers["location"] != nil }
}

/// Fetches objects the way a device would (plain GETs, no credentials), streaming
/// the body to a consumer and never reading more than a limit.
package protocol ObjectFetcher: Sendable {
    /// GETs `url` (with a byte range, if given) and hands at most `limit` body bytes to
    /// `consume`; one more byte sets `exceededLimit`. A redirect is not followed: a 3xx
    /// answer is returned with its Location header and nothing consumed, so the caller
    /// can check every hop before it is requested.
    func fetch(
        _ url: String, range: ClosedRange<Int64>?, limit: Int64, deadline: Date,
        consume: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> FetchResponse

    /// What a URL is actually read from, as the report names it: the URL itself over
    /// HTTP, a file for a directory, another server's URL for a stand-in.
    func origin(of url: String) -> String

    /// What objects are read from, which decides the checks a source cannot make.
    var reads: FetchedFrom { get }

    /// Proves the object at `url` holds `size` bytes with SHA-256 `sha256` without the
    /// verifier downloading it (a store's own checksum), with the headers a fetch would
    /// give. nil: the source has no such proof; fetch the object and hash it.
    func prove(_ url: String, size: Int64, sha256: SHA256Digest) async throws -> ProvenObject?
}

extension ObjectFetcher {
    package func origin(of url: String) -> String { url }
    package var reads: FetchedFrom { .server }
    package func prove(_ url: String, size: Int64, sha256: SHA256Digest) async throws -> ProvenObject? { nil }
}

/// What a source reads objects from: the kinds of source each verify check states
/// whether it can be made through (`ArtifactCheck.statement(for:)`).
package enum FetchedFrom: Sendable, Equatable, CaseIterable {
    /// A web server (or CDN) answering HTTP, as devices see it.
    case server
    /// Files of a published directory: status, Range and headers are what the hosting
    /// files declare, not a server's answers.
    case files
    /// A store's API (S3's HEAD and ranged GET): headers are what the store keeps with
    /// each object; redirects and Content-Encoding are the CDN's, not checked here.
    case storeAPI

    /// How a successful read is described in place of "HTTP 200".
    var readDescription: String {
        switch self {
        case .server: return "HTTP 200"
        case .files: return "read from the file"
        case .storeAPI: return "read through the store's API"
        }
    }

    /// An answer other than 200, as the source gives it.
    func statusProblem(_ status: Int) -> String {
        self == .storeAPI && status == 404 ? "missing: the store has no object under its key" : "HTTP \(status), expected 200"
    }
}

/// An object proven without being downloaded by the verifier (`ObjectFetcher.prove`).
package struct ProvenObject: Sendable {
    /// 200, or 404 when there is no such object.
    package var status: Int
    /// The headers it would be served with.
    package var headers: [String: String]
    /// Its stored size.
    package var size: Int64
    /// What the proof found.
    package var content: Content

    package enum Content: Sendable, Equatable {
        /// The bytes are those expected; the detail says how that was proven.
        case proven(String)
        /// The bytes differ: their SHA-256 when the proof found it, and how it was found.
        case differs(actualSHA256: String?, detail: String)
        /// The size already differs: the bytes were not compared.
        case sizeDiffers
    }

    package init(status: Int, headers: [String: String], size: Int64, content: Content) {
        self.status = status
        self.headers = headers
        self.size = size
        self.content = content
    }
}

/// How far one request got before it ended: what a timeout or a failure reports.
package struct FetchProgress: Sendable, Equatable {
    /// True once the response head arrived.
    package var answered: Bool
    /// Body bytes received.
    package var received: Int64
    /// Seconds since anything last arrived (or since the request was sent).
    package var idle: Double

    package init(answered: Bool, received: Int64, idle: Double) {
        self.answered = answered
        self.received = received
        self.idle = idle
    }

    /// "stalled after 512 bytes of the body (nothing for 15.0 s)", "512 bytes of the body
    /// received, the last 0.2 s ago", "no answer to the request (nothing for 3.0 s)".
    var summary: String {
        if !answered { return "no answer to the request (nothing for \(formatSeconds(idle)) s)" }
        if idle >= 1 { return "stalled after \(received) bytes of the body (nothing for \(formatSeconds(idle)) s)" }
        return "\(received) bytes of the body received, the last \(formatSeconds(idle)) s ago (too slow)"
    }
}

/// Errors while fetching. Each says what happened (the cause, not the HTTP client's
/// internal error) and, once retries are over, how many attempts took how long.
package enum FetchError: Error, Sendable, LocalizedError, CustomStringConvertible {
    /// The request's deadline passed; `progress` says how far it got.
    case timedOut(url: String, seconds: Double, progress: FetchProgress)
    /// A connection-level failure (refused, DNS, TLS, reset, stalled past the idle timeout).
    case transport(url: String, failure: NetworkFailure, progress: FetchProgress?)
    /// More redirects than `limit`; `chain` lists those followed and the one refused.
    case tooManyRedirects(url: String, limit: Int, chain: [String])
    /// A redirect to a URL that fails the rules every manifest URL must pass; never requested.
    case redirectRefused(url: String, status: Int, from: String, to: String, reason: String)
    /// An answer that is not what was asked for (a 206 for other bytes, …); not retried.
    case unexpectedAnswer(url: String, message: String)
    /// A store's API refused or failed the read (no such bucket, refused credentials, not
    /// reached); `unreachable` when the store could not be reached at all.
    case store(url: String, message: String, unreachable: Bool)
    /// The last error after `attempts` attempts, over `seconds` in all; `earlier` is the
    /// error of the attempt before, when there was one.
    indirect case gaveUp(FetchError, attempts: Int, seconds: Double, earlier: FetchError?)

    /// The URL the error is about (the one first requested).
    package var url: String {
        switch self {
        case .timedOut(let url, _, _), .transport(let url, _, _), .tooManyRedirects(let url, _, _),
             .redirectRefused(let url, _, _, _, _), .unexpectedAnswer(let url, _), .store(let url, _, _):
            return url
        case .gaveUp(let last, _, _, _):
            return last.url
        }
    }

    package var description: String { "\(url): \(cause)" }

    /// What happened, without the URL.
    package var cause: String {
        switch self {
        case .timedOut(_, let seconds, let progress):
            return "no complete response within \(formatSeconds(seconds)) s: \(progress.summary)"
        case .transport(_, let failure, let progress):
            if failure.kind == .stalled, let progress {
                return "\(progress.answered ? "stalled after \(progress.received) bytes of the body" : "stalled before any answer"): nothing received for \(formatSeconds(progress.idle)) s"
            }
            if let progress, progress.answered {
                return "\(failure) after \(progress.received) bytes of the body"
            }
            return failure.description
        case .tooManyRedirects(_, let limit, let chain):
            return "more than \(limit) redirects; the next was not requested: \(chain.joined(separator: "; "))"
        case .redirectRefused(let url, let status, let from, let to, let reason):
            let via = from == url ? "" : " (after redirects, at \(from))"
            return "HTTP \(status) redirects\(via) to \(to), which was not requested: \(reason)"
        case .unexpectedAnswer(_, let message), .store(_, let message, _):
            return message
        case .gaveUp(let last, let attempts, let seconds, let earlier):
            let tries = attempts == 1 ? "" : ", \(attempts) attempts"
            // What an attempt that ran out of time without an answer cannot say: why the one before failed.
            let before = earlier.map { " (the attempt before: \($0.cause))" } ?? ""
            switch last {
            case .timedOut(_, _, let progress):
                // The time the whole fetch took, not what was left of the deadline for the last attempt.
                return "no complete response within \(formatSeconds(seconds)) s\(tries): \(progress.summary)\(before)"
            case .transport:
                return "\(last.cause) (\(attempts == 1 ? "after" : "\(attempts) attempts in") \(formatSeconds(seconds)) s)"
            default:
                return last.cause
            }
        }
    }

    package var errorDescription: String? { description }

    /// Worth retrying: a failed connection (refused, reset, dropped mid-body, silent past
    /// the idle timeout) may be transient. A request past its deadline is not: its time
    /// is spent. Nor is a refused redirect, or a TLS failure.
    var isTransient: Bool {
        if case .transport(_, let failure, _) = self { return failure.isTransient }
        return false
    }

    /// True when the host was never reached (connection refused, DNS failure, no route,
    /// connect timeout): nothing was checked, so it is a network failure, not a failed check.
    package var hostNotReached: Bool {
        switch self {
        case .transport(_, let failure, _): return failure.hostNotReached
        case .store(_, _, let unreachable): return unreachable
        case .gaveUp(let last, _, _, _): return last.hostNotReached
        default: return false
        }
    }

    /// True for a redirect verify refused to follow.
    var isRedirectRefusal: Bool {
        switch self {
        case .tooManyRedirects, .redirectRefused: return true
        case .gaveUp(let last, _, _, _): return last.isRedirectRefusal
        default: return false
        }
    }
}

extension FetchError: ExitStatusProviding {
    /// A host that could not be reached or did not answer in time.
    package var exitStatus: ExitStatus { .io }
}
