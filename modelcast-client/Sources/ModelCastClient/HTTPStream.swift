import Foundation
import ModelCastFormat
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// GETs whose bodies are handed over chunk by chunk as they arrive (so a file is hashed
/// while it is written, and a body is never read past a limit), with Foundation's
/// `URLSession` only, each held to the session's idle timeout and to its `TransferBounds`
/// (`TransferWatch`: a minimum rate over each window, a deadline for metadata).
///
/// One session serves every request of a `ModelUpdater`, so the manifest, its signature
/// and the files share connections. A request that fails (a handler threw, a bound was
/// reached, the calling task was cancelled) returns at once, and its transfer is stopped:
/// - On Apple platforms by cancelling its task.
/// - swift-corelibs-foundation (Linux) cannot stop a body that keeps arriving: it ignores
///   the response disposition, and `URLSessionTask.cancel()` must run on the session's
///   work queue, which every session of the process shares and which a transfer's socket
///   events hold as long as data is waiting (measured: a device kept reading a flooding
///   server for 40 s and more, 22 GB, and never returned). So there the session's callbacks
///   run inline on that queue (`InlineDeliveryQueue`: no backlog in memory), and a request
///   that ended while its body still arrives holds that queue for `holdTime` once
///   `PendingRequest.stopReadingAfter` more bytes came: meanwhile libcurl reads nothing,
///   the server can send no more than the two sockets' buffers hold, and at most 64 KiB
///   past the limit was read; a command-line device has returned and exited (closing the
///   connection) long before it ends. In an app, every `URLSession` transfer of the process
///   waits those 2 s; then what still arrives is dropped until the cancel lands (the
///   first moment the socket has nothing waiting: soon on a real network, whose data
///   comes with gaps; up to seconds from a loopback server).
// @unchecked: an NSObject delegate; its one mutable table (`requests`) is touched only
// under `lock`, the rest is set in init.
final class HTTPStream: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    /// What the response head said; throwing ends the request with that error.
    typealias ResponseHandler = (HTTPURLResponse) throws -> Void
    /// Each body chunk, in order; throwing ends the request with that error.
    typealias DataHandler = (Data) throws -> Void

    /// How long a failed Linux transfer whose body keeps coming holds the network queue
    /// (see the type's comment): the time a device program needs to return and exit.
    static let holdTime: TimeInterval = 2

    private let lock = NSLock()
    private var requests: [ObjectIdentifier: PendingRequest] = [:]
    private let bounds: TransferBounds
    private let idleTimeout: TimeInterval
    /// Where the watches' timers run.
    private let watchQueue = DispatchQueue(label: "modelcast.transfer-watch")
    private var session: URLSession!

    /// `timeout`: seconds a request may wait for data before it counts as dropped.
    /// `bounds`: the rate and deadline each request is held to.
    /// `base`: the app's own session configuration (cellular, constrained-network and
    /// proxy settings are the app's); its cache is turned off, since the client proves
    /// every byte itself.
    init(timeout: TimeInterval, bounds: TransferBounds, base: URLSessionConfiguration? = nil) {
        let configuration = (base?.copy() as? URLSessionConfiguration) ?? URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        self.bounds = bounds
        idleTimeout = timeout
        super.init()
        #if canImport(FoundationNetworking)
        let queue: OperationQueue = InlineDeliveryQueue()
        #else
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1  // every callback in order, one at a time
        #endif
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
    }

    /// Ends the session once its requests are done (the session holds its delegate until then).
    func invalidate() {
        session.finishTasksAndInvalidate()
    }

    /// Sends `request` and streams its answer; returns the response once the body is
    /// complete. `metadata`: the request is held to the metadata deadline too.
    /// Cancelling the calling task ends the request at once and throws `CancellationError`.
    func get(_ request: URLRequest, metadata: Bool, onResponse: @escaping ResponseHandler, onData: @escaping DataHandler) async throws -> HTTPURLResponse {
        try Task.checkCancellation()
        let pending = PendingRequest(url: request.url?.absoluteString ?? "", onResponse: onResponse, onData: onData)
        let task = session.dataTask(with: request)
        register(task, pending)
        let bounds = self.bounds, watchQueue = self.watchQueue
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    // The cancel leaves the calling thread: on Linux it waits for the
                    // session's work queue, which may be the one running a callback.
                    let started = pending.start(continuation, stop: { DispatchQueue.global().async { task.cancel() } }) {
                        TransferWatch(pending, bounds: bounds, metadata: metadata, queue: watchQueue)
                    }
                    if started { task.resume() } else { DispatchQueue.global().async { task.cancel() } }
                }
            } onCancel: {
                pending.fail(CancellationError())
            }
        } catch {
            if Task.isCancelled { throw CancellationError() }
            throw error
        }
    }

    /// A GET of a small object into memory, refusing more than `limit` bytes: the
    /// manifest (`ClientError.manifestTooLarge`) or another `object` (`.tooLarge`, naming it).
    func small(_ request: URLRequest, object: SmallObject, limit: Int) async throws -> (HTTPURLResponse, Data) {
        let body = SmallBody()
        let url = request.url?.absoluteString ?? ""
        let tooLarge = object.tooLarge(url: url, limit: limit)
        let response = try await get(request, metadata: true, onResponse: { response in
            if let length = response.value(forHTTPHeaderField: "Content-Length").flatMap(Int.init), length > limit { throw tooLarge }
        }, onData: { chunk in
            guard body.data.count + chunk.count <= limit else { throw tooLarge }
            body.data.append(chunk)
        })
        return (response, body.data)
    }

    /// A small object `small(_:object:limit:)` reads, for its errors.
    enum SmallObject {
        case manifest, signature, segmentIndex

        func tooLarge(url: String, limit: Int) -> ClientError {
            switch self {
            case .manifest: return .manifestTooLarge(url: url, limit: limit)
            case .signature: return .tooLarge(url: url, object: "signature", limit: Int64(limit))
            case .segmentIndex: return .tooLarge(url: url, object: "segment index", limit: Int64(limit))
            }
        }
    }

    private func register(_ task: URLSessionTask, _ pending: PendingRequest) {
        lock.lock()
        defer { lock.unlock() }
        requests[ObjectIdentifier(task)] = pending
    }

    private func pending(_ task: URLSessionTask) -> PendingRequest? {
        lock.lock()
        defer { lock.unlock() }
        return requests[ObjectIdentifier(task)]
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse, completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        guard let pending = pending(dataTask) else { return completionHandler(.cancel) }
        completionHandler(pending.take(response) ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let pending = pending(dataTask) else { return }
        #if canImport(FoundationNetworking)
        if pending.take(data) == .stopReading {
            // This is the network queue, inside libcurl's callback: while it sleeps,
            // nothing more is read (see the type's comment).
            Thread.sleep(forTimeInterval: Self.holdTime)
        }
        #else
        _ = pending.take(data)
        #endif
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        lock.lock()
        let pending = requests.removeValue(forKey: ObjectIdentifier(task))
        lock.unlock()
        pending?.complete(error, idleTimeout: idleTimeout)
    }

    #if canImport(FoundationNetworking)
    /// A 401 with `WWW-Authenticate` (the client sends no credentials): swift-corelibs-foundation
    /// would retry with stored ones, or wait for ever without any; the request ends with
    /// the status instead, and the challenge is cancelled off this (inline) thread.
    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @Sendable @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        let status = (challenge.failureResponse as? HTTPURLResponse)?.statusCode ?? 401
        pending(task)?.fail(ClientError.http(url: task.originalRequest?.url?.absoluteString ?? "", status: status))
        DispatchQueue.global().async { completionHandler(.cancelAuthenticationChallenge, nil) }
    }
    #endif

    /// A small object's bytes as they arrive (handlers run one at a time).
    // @unchecked: a plain var, appended to by one request's handlers, which the session
    // runs one at a time on its serial queue; read after the request has ended.
    private final class SmallBody: @unchecked Sendable {
        var data = Data()
    }
}
