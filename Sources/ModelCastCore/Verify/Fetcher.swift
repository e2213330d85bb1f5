import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// A response as the verifier sees it.
public struct FetchResponse: Sendable {
    /// Final HTTP status (after redirects).
    public var status: Int
    /// Header fields by lower-cased name; repeated fields joined with ", ".
    public var headers: [String: String]
    /// Every redirect followed, as "STATUS FROM -> TO".
    public var redirects: [String]
    /// Body bytes handed to the consumer.
    public var bytesRead: Int64
    /// True when the body had more than the limit (reading stopped there).
    public var exceededLimit: Bool

    public init(status: Int, headers: [String: String], redirects: [String] = [], bytesRead: Int64, exceededLimit: Bool) {
        self.status = status
        self.headers = headers
        self.redirects = redirects
        self.bytesRead = bytesRead
        self.exceededLimit = exceededLimit
    }

    /// True for a 3xx answer with a Location: a redirect for the caller to check and follow.
    public var isRedirect: Bool { (300..<400).contains(status) && headers["location"] != nil }
}

/// Fetches objects the way a device would (plain GETs, no credentials), streaming
/// the body to a consumer and never reading more than a limit.
public protocol ObjectFetcher: Sendable {
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

    /// True when objects are read from files: HTTP status, Range and headers are then
    /// what the hosting files declare, not a server's answers.
    var readsFiles: Bool { get }
}

extension ObjectFetcher {
    public func origin(of url: String) -> String { url }
    public var readsFiles: Bool { false }
}

/// Fetches through `inner` with every URL under `production` (a base URL) read from the
/// same path under `standIn` instead: a preview server (`modelcast serve`) standing in for
/// the CDN a release was published for. The manifest's URLs are checked as written.
public struct StandInFetcher: ObjectFetcher {
    public let inner: any ObjectFetcher
    public let production: String
    public let standIn: String

    /// `manifestURL` is the manifest's URL on the stand-in: its target's root stands in
    /// for `production`.
    public init(_ inner: any ObjectFetcher, production: String, manifestURL: String) {
        self.inner = inner
        self.production = production.hasSuffix("/") ? String(production.dropLast()) : production
        let root = targetRoot(ofManifestURL: manifestURL)
        self.standIn = root.hasSuffix("/") ? String(root.dropLast()) : root
    }

    public func origin(of url: String) -> String {
        url.hasPrefix(production + "/") ? standIn + url.dropFirst(production.count) : url
    }

    public func fetch(
        _ url: String, range: ClosedRange<Int64>?, limit: Int64, deadline: Date,
        consume: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> FetchResponse {
        try await inner.fetch(origin(of: url), range: range, limit: limit, deadline: deadline, consume: consume)
    }
}

/// How far one request got before it ended: what a timeout or a failure reports.
public struct FetchProgress: Sendable, Equatable {
    /// True once the response head arrived.
    public var answered: Bool
    /// Body bytes received.
    public var received: Int64
    /// Seconds since anything last arrived (or since the request was sent).
    public var idle: Double

    public init(answered: Bool, received: Int64, idle: Double) {
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
public enum FetchError: Error, Sendable, LocalizedError, CustomStringConvertible {
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
    /// The last error after `attempts` attempts, over `seconds` in all; `earlier` is the
    /// error of the attempt before, when there was one.
    indirect case gaveUp(FetchError, attempts: Int, seconds: Double, earlier: FetchError?)

    /// The URL the error is about (the one first requested).
    public var url: String {
        switch self {
        case .timedOut(let url, _, _), .transport(let url, _, _), .tooManyRedirects(let url, _, _),
             .redirectRefused(let url, _, _, _, _), .unexpectedAnswer(let url, _):
            return url
        case .gaveUp(let last, _, _, _):
            return last.url
        }
    }

    public var description: String { "\(url): \(cause)" }

    /// What happened, without the URL.
    public var cause: String {
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
        case .unexpectedAnswer(_, let message):
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

    public var errorDescription: String? { description }

    /// Worth retrying: a failed connection (refused, reset, dropped mid-body, silent past
    /// the idle timeout) may be transient. A request past its deadline is not: its time
    /// is spent. Nor is a refused redirect, or a TLS failure.
    var isTransient: Bool {
        if case .transport(_, let failure, _) = self { return failure.isTransient }
        return false
    }

    /// True when the host was never reached (connection refused, DNS failure, no route,
    /// connect timeout): nothing was checked, so it is a network failure, not a failed check.
    public var hostNotReached: Bool {
        switch self {
        case .transport(_, let failure, _): return failure.hostNotReached
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

/// HTTP through async-http-client: no automatic redirects (the verifier checks each
/// one before it is requested), no decompression (a Content-Encoding is seen as the
/// device would get it), and an idle-read timeout so a stalled server fails instead
/// of hanging. A failed connection fails at once with its cause (the pool does not
/// retry it until the connect timeout); the verifier retries with backoff.
public final class HTTPFetcher: ObjectFetcher, @unchecked Sendable {
    private let client: HTTPClient
    /// The most redirects followed for one request.
    public static let maxRedirects = 5

    /// `idleTimeout`: the longest silence tolerated while reading.
    public init(connectTimeout: TimeInterval = 10, idleTimeout: TimeInterval = 15) {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .milliseconds(Int64(connectTimeout * 1000)), read: .milliseconds(Int64(idleTimeout * 1000))),
            decompression: .disabled)
        configuration.httpVersion = .automatic
        configuration.connectionPool.retryConnectionEstablishment = false
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Closes the connection pool; call once when done.
    public func shutdown() async {
        try? await client.shutdown()
    }

    public func fetch(
        _ url: String, range: ClosedRange<Int64>?, limit: Int64, deadline: Date,
        consume: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> FetchResponse {
        let tracker = ProgressTracker()
        let started = Date()
        return try await withDeadline(deadline, onTimeout: { FetchError.timedOut(url: url, seconds: Date().timeIntervalSince(started), progress: tracker.snapshot) }) {
            try await self.fetchOnce(url, range: range, limit: limit, deadline: deadline, started: started, tracker: tracker, consume: consume)
        }
    }

    private func fetchOnce(
        _ url: String, range: ClosedRange<Int64>?, limit: Int64, deadline: Date, started: Date, tracker: ProgressTracker,
        consume: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> FetchResponse {
        let host = urlAuthority(url)
        var headers = HTTPHeaders()
        // A server that compresses for devices does it for verify too; only what verify
        // can decode is asked for (URLSession also offers br).
        headers.add(name: "Accept-Encoding", value: ContentDecoding.acceptEncoding)
        headers.add(name: "User-Agent", value: "modelcast-verify/\(ModelCastVersion.current)")
        if let range { headers.add(name: "Range", value: "bytes=\(range.lowerBound)-\(range.upperBound)") }
        let request: HTTPClient.Request
        do {
            request = try HTTPClient.Request(url: url, method: .GET, headers: headers)
        } catch {
            throw FetchError.transport(url: url, failure: NetworkFailure(error, host: host), progress: tracker.snapshot)
        }
        // The body goes to the consumer (a hasher) on its own queue, straight from the
        // event loop: the next buffer is read while this one is hashed.
        let consumer = BodyConsumer(consume: consume)
        let delegate = StreamingBodyDelegate(limit: limit, tracker: tracker, consumer: consumer)
        let task = client.execute(request: request, delegate: delegate,
                                  deadline: .now() + .milliseconds(Int64(max(0.001, deadline.timeIntervalSinceNow) * 1000)))
        let outcome: StreamingBodyDelegate.Outcome
        do {
            outcome = try await withTaskCancellationHandler {
                try await task.futureResult.get()
            } onCancel: {
                task.cancel()
            }
            try await consumer.finish()
        } catch {
            await consumer.drain()
            if let outcome = delegate.stoppedAtLimit() {
                // Reading stopped on purpose: the body is longer than the limit.
                return FetchResponse(status: outcome.status, headers: outcome.headers, bytesRead: outcome.read, exceededLimit: true)
            }
            switch error {
            case let error as FetchError: throw error
            case is CancellationError: throw CancellationError()
            case let error as HTTPClientError where error == .cancelled && Task.isCancelled: throw CancellationError()
            case let error as HTTPClientError where error == .deadlineExceeded:
                throw FetchError.timedOut(url: url, seconds: Date().timeIntervalSince(started), progress: tracker.snapshot)
            default:
                throw FetchError.transport(url: url, failure: NetworkFailure(error, host: host), progress: tracker.snapshot)
            }
        }
        if outcome.isRedirect { return FetchResponse(status: outcome.status, headers: outcome.headers, bytesRead: 0, exceededLimit: false) }
        return FetchResponse(status: outcome.status, headers: outcome.headers, bytesRead: outcome.read, exceededLimit: false)
    }
}

/// Receives one response on the event loop: the head, then each body buffer, handed to
/// the consumer as it is (a slice past the limit is never handed over). A body longer
/// than the limit stops the request; `stoppedAtLimit` then tells the caller what was read.
final class StreamingBodyDelegate: HTTPClientResponseDelegate, Sendable {
    struct Outcome: Sendable {
        var status = 0
        var headers: [String: String] = [:]
        var read: Int64 = 0
        var isRedirect = false
    }

    /// Fails the request on purpose when the body goes past the limit.
    struct LimitReached: Error {}

    private struct State {
        var outcome = Outcome()
        var exceeded = false
    }

    private let limit: Int64
    private let tracker: ProgressTracker
    private let consumer: BodyConsumer
    private let state = NIOLockedValueBox(State())

    init(limit: Int64, tracker: ProgressTracker, consumer: BodyConsumer) {
        self.limit = limit
        self.tracker = tracker
        self.consumer = consumer
    }

    /// What was read when reading stopped at the limit, or nil when it did not.
    func stoppedAtLimit() -> Outcome? {
        state.withLockedValue { $0.exceeded ? $0.outcome : nil }
    }

    func didReceiveHead(task: HTTPClient.Task<Outcome>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        tracker.answered()
        var headers: [String: String] = [:]
        for (name, value) in head.headers {
            let key = name.lowercased()
            headers[key] = headers[key].map { $0 + ", " + value } ?? value
        }
        let status = Int(head.status.code)
        state.withLockedValue {
            $0.outcome.status = status
            $0.outcome.headers = headers
            // A redirect's body is not the object: read (a little of it) and drop it.
            $0.outcome.isRedirect = (300..<400).contains(status) && headers["location"] != nil
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Outcome>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        let available = Int64(buffer.readableBytes)
        tracker.received(available)
        let (take, isRedirect) = state.withLockedValue { state -> (Int64, Bool) in
            let bodyLimit = state.outcome.isRedirect ? Int64(64 << 10) : limit
            let take = min(available, max(0, bodyLimit - state.outcome.read))
            state.outcome.read += take
            if available > take { state.exceeded = true }
            return (take, state.outcome.isRedirect)
        }
        var handed: EventLoopFuture<Void>?
        if take > 0, !isRedirect {
            handed = consumer.submit(take == available ? buffer : buffer.getSlice(at: buffer.readerIndex, length: Int(take))!, on: task.eventLoop)
        }
        if available > take {
            // Never download beyond what the manifest promised.
            return task.eventLoop.makeFailedFuture(LimitReached())
        }
        return handed ?? task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<Outcome>) throws -> Outcome {
        state.withLockedValue { $0.outcome }
    }
}

/// What one request has received so far, for timeout and stall messages.
final class ProgressTracker: Sendable {
    private struct State {
        var hasAnswer = false
        var bytes: Int64 = 0
        var lastActivity = Date()
    }
    private let state = NIOLockedValueBox(State())

    func answered() {
        state.withLockedValue {
            $0.hasAnswer = true
            $0.lastActivity = Date()
        }
    }

    func received(_ count: Int64) {
        state.withLockedValue {
            $0.bytes += count
            $0.lastActivity = Date()
        }
    }

    var snapshot: FetchProgress {
        state.withLockedValue {
            FetchProgress(answered: $0.hasAnswer, received: $0.bytes, idle: Date().timeIntervalSince($0.lastActivity))
        }
    }
}

/// Serves objects from a published directory as if it were the host: URLs under
/// the base URL map to files, headers come from `_modelcast/objects.json` (what
/// the uploader will set). Lets `verify DIR` check a release before it is synced.
public struct DirectoryFetcher: ObjectFetcher {
    public let root: String
    public let baseURL: String
    /// Headers by key, from the object-metadata file.
    public let declared: [String: ObjectMetadata]

    /// Reads `_modelcast/objects.json` under `root` for the base URL and headers.
    public init(root: String, baseURL: String? = nil) throws {
        self.root = root
        let file = try HostedObjectsFile(root: root)
        let declared = file?.declared ?? [:]
        let base = baseURL ?? file?.baseURL
        guard let base else {
            throw ModelCastError.usage("\(root) has no _modelcast/objects.json to say which URL it is served from; pass --base-url")
        }
        self.baseURL = base.hasSuffix("/") ? String(base.dropLast()) : base
        self.declared = declared
    }

    public func origin(of url: String) -> String {
        key(for: url).map { root + "/" + $0 } ?? url
    }

    public var readsFiles: Bool { true }

    /// The key a URL maps to, or nil when it lies outside the base URL.
    public func key(for url: String) -> String? {
        guard url.hasPrefix(baseURL + "/") else { return nil }
        return String(url.dropFirst(baseURL.count + 1)).removingPercentEncoding
    }

    public func fetch(
        _ url: String, range: ClosedRange<Int64>?, limit: Int64, deadline: Date,
        consume: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> FetchResponse {
        guard let key = key(for: url), (try? validateKey(key)) != nil,
              let info = try linkStatus(root + "/" + key), case .regular = FileType(mode: info.st_mode) else {
            return FetchResponse(status: 404, headers: [:], redirects: [], bytesRead: 0, exceededLimit: false)
        }
        let size = Int64(info.st_size)
        var headers: [String: String] = ["accept-ranges": "bytes"]
        if let metadata = declared[key] {
            headers["cache-control"] = metadata.cacheControl
            headers["content-type"] = metadata.contentType
        }
        let file = try FileDescriptor.openForReading(root + "/" + key)
        var start: Int64 = 0
        var end = size - 1
        var status = 200
        if let range {
            guard range.lowerBound < size else {
                return FetchResponse(status: 416, headers: headers, redirects: [], bytesRead: 0, exceededLimit: false)
            }
            start = range.lowerBound
            end = min(range.upperBound, size - 1)
            status = 206
            headers["content-range"] = "bytes \(start)-\(end)/\(size)"
        }
        headers["content-length"] = String(end - start + 1)
        var read: Int64 = 0
        var offset = start
        var exceeded = false
        while offset <= end {
            let count = Int(min(1 << 20, end - offset + 1))
            let chunk = try file.read(at: offset, count: count)
            if chunk.isEmpty { break }
            let take = Int(min(Int64(chunk.count), limit - read))
            if take > 0 { try chunk.withUnsafeBytes { try consume(UnsafeRawBufferPointer(rebasing: $0[0..<take])) } }
            read += Int64(take)
            offset += Int64(chunk.count)
            if take < chunk.count {
                exceeded = true
                break
            }
        }
        return FetchResponse(status: status, headers: headers, redirects: [], bytesRead: read, exceededLimit: exceeded)
    }
}

/// Runs `operation`, throwing `onTimeout()` (and cancelling it) if `deadline` passes first.
func withDeadline<T: Sendable>(_ deadline: Date, onTimeout: @escaping @Sendable () -> Error, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            let nanoseconds = UInt64(max(0, deadline.timeIntervalSinceNow) * 1_000_000_000)
            try await Task.sleep(nanoseconds: nanoseconds)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw onTimeout() }
        guard let value = first else { throw onTimeout() }
        return value
    }
}

extension FetchError: ExitStatusProviding {
    /// A host that could not be reached or did not answer in time.
    public var exitStatus: ExitStatus { .io }
}

/// GETs a small object (a manifest) over HTTP(S) as a device would: no redirect followed,
/// at most `limit` bytes, HTTP 200 only.
public func downloadSmallObject(_ url: String, limit: Int = 4 << 20, timeout: TimeInterval = 30) async throws -> Data {
    let fetcher = HTTPFetcher()
    let body = NIOLockedValueBox<[UInt8]>([])
    let result: Result<FetchResponse, Error>
    do {
        result = .success(try await fetcher.fetch(url, range: nil, limit: Int64(limit), deadline: Date().addingTimeInterval(timeout)) { chunk in
            body.withLockedValue { $0.append(contentsOf: chunk) }
        })
    } catch {
        result = .failure(error)
    }
    await fetcher.shutdown()
    let response = try result.get()
    guard response.status == 200 else {
        throw ModelCastError.io(operation: "GET", path: url, reason: "HTTP \(response.status)\(response.isRedirect ? " (a redirect to \(response.headers["location"]!); give the final URL)" : "")")
    }
    guard !response.exceededLimit else { throw ModelCastError.io(operation: "GET", path: url, reason: "larger than \(limit) bytes") }
    return Data(body.withLockedValue { $0 })
}
