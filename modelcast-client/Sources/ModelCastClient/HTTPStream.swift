import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// GETs whose bodies are handed over chunk by chunk as they arrive (so a file is hashed
/// while it is written, and a body is never read past a limit), with Foundation's
/// `URLSession` only. One session per `ModelUpdater`, so the manifest, its signature and
/// the files share connections; each request has its own handlers.
final class HTTPStream: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    /// What the response head said; throwing cancels the request with that error.
    typealias ResponseHandler = (HTTPURLResponse) throws -> Void
    /// Each body chunk, in order; throwing cancels the request with that error.
    typealias DataHandler = (Data) throws -> Void

    private final class Request {
        let onResponse: ResponseHandler
        let onData: DataHandler
        let continuation: CheckedContinuation<HTTPURLResponse, Error>
        var response: HTTPURLResponse?
        var failure: Error?

        init(onResponse: @escaping ResponseHandler, onData: @escaping DataHandler, continuation: CheckedContinuation<HTTPURLResponse, Error>) {
            self.onResponse = onResponse
            self.onData = onData
            self.continuation = continuation
        }
    }

    private let lock = NSLock()
    private var requests: [Int: Request] = [:]
    private var session: URLSession!

    /// `timeout`: seconds a request may wait for data before it counts as dropped.
    /// `base`: the app's own session configuration (cellular, constrained-network and
    /// proxy settings are the app's); its cache is turned off, since the client proves
    /// every byte itself.
    init(timeout: TimeInterval, base: URLSessionConfiguration? = nil) {
        super.init()
        let configuration = (base?.copy() as? URLSessionConfiguration) ?? URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1  // every callback in order, one at a time
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
    }

    /// Ends the session once its requests are done (the session holds its delegate until then).
    func invalidate() {
        session.finishTasksAndInvalidate()
    }

    /// Sends `request` and streams its answer; returns the response once the body is complete.
    /// Cancelling the calling task cancels the request at once and throws `CancellationError`.
    func get(_ request: URLRequest, onResponse: @escaping ResponseHandler, onData: @escaping DataHandler) async throws -> HTTPURLResponse {
        try Task.checkCancellation()
        let task = session.dataTask(with: request)
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    lock.lock()
                    requests[task.taskIdentifier] = Request(onResponse: onResponse, onData: onData, continuation: continuation)
                    lock.unlock()
                    task.resume()
                    // Cancelled before the request was registered: the handler below found nothing to stop.
                    if Task.isCancelled { task.cancel() }
                }
            } onCancel: {
                task.cancel()
            }
        } catch {
            if Task.isCancelled { throw CancellationError() }
            throw error
        }
    }

    /// A GET of a small object into memory, refusing more than `limit` bytes.
    func small(_ request: URLRequest, limit: Int) async throws -> (HTTPURLResponse, Data) {
        let body = Body()
        let url = request.url?.absoluteString ?? ""
        let response = try await get(request, onResponse: { response in
            if let length = response.value(forHTTPHeaderField: "Content-Length").flatMap(Int.init), length > limit {
                throw ClientError.manifestTooLarge(url: url, limit: limit)
            }
        }, onData: { chunk in
            try body.append(chunk, limit: limit, url: url)
        })
        return (response, body.data)
    }

    private func request(_ task: URLSessionTask) -> Request? {
        lock.lock()
        defer { lock.unlock() }
        return requests[task.taskIdentifier]
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse, completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        guard let request = request(dataTask) else { return completionHandler(.cancel) }
        do {
            guard let http = response as? HTTPURLResponse else {
                throw ClientError.network(url: response.url?.absoluteString ?? "", reason: "not an HTTP response")
            }
            try request.onResponse(http)
            request.response = http
            completionHandler(.allow)
        } catch {
            request.failure = error
            completionHandler(.cancel)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let request = request(dataTask), request.failure == nil else { return }
        do { try request.onData(data) } catch {
            request.failure = error
            dataTask.cancel()
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        lock.lock()
        let request = requests.removeValue(forKey: task.taskIdentifier)
        lock.unlock()
        guard let request else { return }
        let url = task.originalRequest?.url?.absoluteString ?? ""
        if let failure = request.failure {
            request.continuation.resume(throwing: failure)
        } else if let error {
            request.continuation.resume(throwing: ClientError.network(url: url, reason: error.localizedDescription))
        } else if let response = request.response {
            request.continuation.resume(returning: response)
        } else {
            request.continuation.resume(throwing: ClientError.network(url: url, reason: "no response"))
        }
    }

    private final class Body: @unchecked Sendable {
        var data = Data()
        func append(_ chunk: Data, limit: Int, url: String) throws {
            guard data.count + chunk.count <= limit else { throw ClientError.manifestTooLarge(url: url, limit: limit) }
            data.append(chunk)
        }
    }
}
