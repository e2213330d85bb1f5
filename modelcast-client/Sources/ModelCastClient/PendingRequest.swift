import Foundation
import ModelCastFormat
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request under way: its handlers, the body bytes they took, and its end, which comes
/// once, from the first of: the transfer's end, a handler's throw, a bound
/// (`TransferWatch`), the caller's cancellation. The caller gets the end at once; a failed
/// request's transfer is then stopped (`stop`), and whatever still arrives is refused
/// (`take` says false: libcurl aborts the transfer there).
// @unchecked: its mutable state (continuation, result, response, counts) is touched only
// under `lock` (an NSLock the compiler cannot see); the handlers are set once, in init.
final class PendingRequest: @unchecked Sendable {
    let url: String
    private let onResponse: HTTPStream.ResponseHandler
    private let onData: HTTPStream.DataHandler
    /// Held while a handler runs, so an end from another thread (a bound, a cancel) never
    /// overlaps one: once the caller has the end, no handler runs again and the state the
    /// handlers filled is the caller's.
    private let lock = NSLock()
    private var continuation: CheckedContinuation<HTTPURLResponse, Error>?
    private var result: Result<HTTPURLResponse, Error>?
    private var response: HTTPURLResponse?
    private var taken: Int64 = 0
    private var watch: TransferWatch?
    /// Stops the transfer of a failed request (set before the task starts).
    private var stopTransfer: (@Sendable () -> Void)?

    init(url: String, onResponse: @escaping HTTPStream.ResponseHandler, onData: @escaping HTTPStream.DataHandler) {
        self.url = url
        self.onResponse = onResponse
        self.onData = onData
    }

    /// Body bytes the data handler took so far.
    var bytesTaken: Int64 {
        lock.lock()
        defer { lock.unlock() }
        return taken
    }

    /// Hands the request its caller, the way to stop its transfer, and its watch; false
    /// when it has already ended (cancelled before it started): the continuation then has
    /// its end, and the transfer should not be started.
    func start(_ continuation: CheckedContinuation<HTTPURLResponse, Error>, stop: @escaping @Sendable () -> Void,
               watch: () -> TransferWatch) -> Bool {
        lock.lock()
        if let result {
            lock.unlock()
            continuation.resume(with: result)
            return false
        }
        self.continuation = continuation
        stopTransfer = stop
        self.watch = watch()
        lock.unlock()
        return true
    }

    /// The response head: false when the request has ended (now, by the handler's throw, or before).
    func take(_ response: URLResponse) -> Bool {
        lock.lock()
        guard result == nil else {
            lock.unlock()
            return false
        }
        do {
            guard let http = response as? HTTPURLResponse else { throw ClientError.network(url: url, reason: "not an HTTP response") }
            try onResponse(http)
            self.response = http
            lock.unlock()
            return true
        } catch {
            let end = ended(.failure(error))
            lock.unlock()
            end()
            return false
        }
    }

    /// A body chunk: to the data handler while the request runs (true), refused once it
    /// has ended (false: by the handler's throw now, or before).
    func take(_ chunk: Data) -> Bool {
        lock.lock()
        guard result == nil else {
            lock.unlock()
            return false
        }
        do {
            try onData(chunk)
            taken += Int64(chunk.count)
            lock.unlock()
            return true
        } catch {
            let end = ended(.failure(error))
            lock.unlock()
            end()
            return false
        }
    }

    /// The transfer's end: nil when the body is complete (the request succeeds with its
    /// response), else why it failed, in words (`networkFailureReason`).
    func complete(_ failure: String?) {
        lock.lock()
        let outcome: Result<HTTPURLResponse, Error>
        if let failure {
            outcome = .failure(ClientError.network(url: url, reason: failure))
        } else if let response {
            outcome = .success(response)
        } else {
            outcome = .failure(ClientError.network(url: url, reason: "no response"))
        }
        let end = ended(outcome)
        lock.unlock()
        end()
    }

    /// Ends the request with `error` (a bound, a cancellation), unless it has ended.
    func fail(_ error: Error) {
        lock.lock()
        let end = ended(.failure(error))
        lock.unlock()
        end()
    }

    /// Records the end (under `lock`) unless there is one; what to do once the lock is
    /// released: resume the caller, stop the watch and, for a failure, the transfer.
    private func ended(_ outcome: Result<HTTPURLResponse, Error>) -> () -> Void {
        guard result == nil else { return {} }
        result = outcome
        let continuation = self.continuation, watch = self.watch, stop = stopTransfer
        self.continuation = nil
        self.watch = nil
        return {
            watch?.stop()
            if case .failure = outcome { stop?() }
            continuation?.resume(with: outcome)
        }
    }
}
