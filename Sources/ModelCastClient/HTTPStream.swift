import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One GET whose body is handed over chunk by chunk as it arrives (so a file is hashed
/// while it is written, and a body is never read past a limit), with Foundation's
/// `URLSession` only.
final class HTTPStream: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    /// What the response head said; returning false cancels the request.
    typealias ResponseHandler = (HTTPURLResponse) throws -> Void
    /// Each body chunk, in order; throwing cancels the request with that error.
    typealias DataHandler = (Data) throws -> Void

    private let onResponse: ResponseHandler
    private let onData: DataHandler
    private let lock = NSLock()
    private var continuation: CheckedContinuation<HTTPURLResponse, Error>?
    private var response: HTTPURLResponse?
    private var failure: Error?

    private init(onResponse: @escaping ResponseHandler, onData: @escaping DataHandler) {
        self.onResponse = onResponse
        self.onData = onData
    }

    /// Sends `request` and streams its answer; returns the response once the body is
    /// complete. Callbacks run one at a time, in order.
    static func get(_ request: URLRequest, timeout: TimeInterval, onResponse: @escaping ResponseHandler, onData: @escaping DataHandler) async throws -> HTTPURLResponse {
        let stream = HTTPStream(onResponse: onResponse, onData: onData)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let session = URLSession(configuration: configuration, delegate: stream, delegateQueue: queue)
        defer { session.finishTasksAndInvalidate() }
        return try await withCheckedThrowingContinuation { continuation in
            stream.lock.lock()
            stream.continuation = continuation
            stream.lock.unlock()
            session.dataTask(with: request).resume()
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse, completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        guard let http = response as? HTTPURLResponse else {
            fail(ClientError.network(url: response.url?.absoluteString ?? "", reason: "not an HTTP response"))
            completionHandler(.cancel)
            return
        }
        do {
            try onResponse(http)
            lock.lock()
            self.response = http
            lock.unlock()
            completionHandler(.allow)
        } catch {
            fail(error)
            completionHandler(.cancel)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lock.lock()
        let failed = failure != nil
        lock.unlock()
        guard !failed else { return }
        do { try onData(data) } catch {
            fail(error)
            dataTask.cancel()
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        lock.lock()
        let continuation = self.continuation
        self.continuation = nil
        let failure = self.failure
        let response = self.response
        lock.unlock()
        guard let continuation else { return }
        if let failure {
            continuation.resume(throwing: failure)
        } else if let error {
            continuation.resume(throwing: ClientError.network(url: task.originalRequest?.url?.absoluteString ?? "", reason: error.localizedDescription))
        } else if let response {
            continuation.resume(returning: response)
        } else {
            continuation.resume(throwing: ClientError.network(url: task.originalRequest?.url?.absoluteString ?? "", reason: "no response"))
        }
    }

    private func fail(_ error: Error) {
        lock.lock()
        if failure == nil { failure = error }
        lock.unlock()
    }

    /// A GET of a small object into memory, refusing more than `limit` bytes.
    static func small(_ request: URLRequest, limit: Int, timeout: TimeInterval) async throws -> (HTTPURLResponse, Data) {
        let body = Body()
        let url = request.url?.absoluteString ?? ""
        let response = try await get(request, timeout: timeout, onResponse: { response in
            if let length = response.value(forHTTPHeaderField: "Content-Length").flatMap(Int.init), length > limit {
                throw ClientError.manifestTooLarge(url: url, limit: limit)
            }
        }, onData: { chunk in
            try body.append(chunk, limit: limit, url: url)
        })
        return (response, body.data)
    }

    private final class Body: @unchecked Sendable {
        var data = Data()
        func append(_ chunk: Data, limit: Int, url: String) throws {
            guard data.count + chunk.count <= limit else { throw ClientError.manifestTooLarge(url: url, limit: limit) }
            data.append(chunk)
        }
    }
}
