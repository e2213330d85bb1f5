import Foundation
import ModelCastFormat
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `HTTPStream`'s transport on Apple platforms: one `URLSession` whose data tasks hand the
/// head and each chunk to the request (its delegate's callbacks run one at a time, in
/// order, on a serial queue); a failed request's task is cancelled. The session's
/// `timeoutIntervalForRequest` is the idle timeout.
///
/// It is compiled on Linux too, so the tests there type-check it, but not used:
/// swift-corelibs-foundation ignores the response disposition, cannot cancel a task whose
/// body keeps arriving (`cancel()` waits on a queue the transfer holds), and queues chunks
/// without back-pressure (`CurlTransport`).
// @unchecked: an NSObject delegate; its one mutable table (`requests`) is touched only
// under `lock`, the session is set in init.
final class URLSessionTransport: NSObject, URLSessionDataDelegate, HTTPTransport, @unchecked Sendable {
    private let lock = NSLock()
    private var requests: [ObjectIdentifier: PendingRequest] = [:]
    private let idleTimeout: TimeInterval
    private var session: URLSession!

    /// `base`: the app's own session configuration (cellular, constrained-network and
    /// proxy settings, extra headers are the app's); its cache is turned off, since the
    /// client proves every byte itself.
    init(timeout: TimeInterval, base: URLSessionConfiguration?) {
        let configuration = (base?.copy() as? URLSessionConfiguration) ?? URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        idleTimeout = timeout
        super.init()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1  // every callback in order, one at a time
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
    }

    /// Ends the session once its requests are done (the session holds its delegate until then).
    func invalidate() {
        session.finishTasksAndInvalidate()
    }

    func transfer(_ request: URLRequest, for pending: PendingRequest) -> HTTPTransfer {
        let task = session.dataTask(with: request)
        lock.lock()
        requests[ObjectIdentifier(task)] = pending
        lock.unlock()
        // The cancel leaves the calling thread, which may be the delegate queue's.
        return HTTPTransfer(start: { task.resume() }, stop: { DispatchQueue.global().async { task.cancel() } })
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
        // A chunk of a request that has ended is dropped; its task is being cancelled.
        _ = pending(dataTask)?.take(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        lock.lock()
        let pending = requests.removeValue(forKey: ObjectIdentifier(task))
        lock.unlock()
        pending?.complete(error.map { networkFailureReason($0, url: pending?.url ?? "", idleTimeout: idleTimeout) })
    }
}
