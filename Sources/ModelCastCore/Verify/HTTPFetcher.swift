import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// HTTP through async-http-client: no automatic redirects (the verifier checks each
/// one before it is requested), no decompression (a Content-Encoding is seen as the
/// device would get it), and an idle-read timeout so a stalled server fails instead
/// of hanging. A failed connection fails at once with its cause (the pool does not
/// retry it until the connect timeout); the verifier retries with backoff.
package final class HTTPFetcher: ObjectFetcher, Sendable {
    private let client: HTTPClient
    private let shutDown = NIOLockedValueBox(false)
    /// The most redirects followed for one request.
    package static let maxRedirects = 5

    /// `idleTimeout`: the longest silence tolerated while reading.
    package init(connectTimeout: TimeInterval = 10, idleTimeout: TimeInterval = 15) {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .milliseconds(Int64(connectTimeout * 1000)), read: .milliseconds(Int64(idleTimeout * 1000))),
            decompression: .disabled)
        configuration.httpVersion = .automatic
        configuration.connectionPool.retryConnectionEstablishment = false
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Closes the connection pool; call once when done (`withSource` does).
    package func shutdown() async {
        guard shutDown.withLockedValue({ done in defer { done = true }; return !done }) else { return }
        // Shutting down an idle pool cannot fail in a way the caller could act on.
        try? await client.shutdown()
    }

    /// True once `shutdown` was called.
    package var isShutDown: Bool { shutDown.withLockedValue { $0 } }

    package func fetch(
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

extension HTTPFetcher {
    /// The body of a GET of `url`, at most `limit` bytes; nil when the status is one of
    /// `absent` (a report asks for records that may not be there: 404, or 403 from a bucket).
    /// Any other status but 200, a redirect or a larger body is an error naming the URL.
    package func getSmallObject(_ url: String, limit: Int, timeout: TimeInterval = 30, absent: Set<Int> = []) async throws -> Data? {
        let body = NIOLockedValueBox<[UInt8]>([])
        let response = try await fetch(url, range: nil, limit: Int64(limit), deadline: Date().addingTimeInterval(timeout)) { chunk in
            body.withLockedValue { $0.append(contentsOf: chunk) }
        }
        if absent.contains(response.status) { return nil }
        guard response.status == 200 else {
            throw ModelCastError.io(operation: "GET", path: url, reason: "HTTP \(response.status)\(response.isRedirect ? " (a redirect to \(response.headers["location"]!); give the final URL)" : "")")
        }
        guard !response.exceededLimit else { throw ModelCastError.io(operation: "GET", path: url, reason: "larger than \(limit) bytes") }
        return Data(body.withLockedValue { $0 })
    }
}
