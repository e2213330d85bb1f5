import Foundation
import ModelCastFormat
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// GETs whose bodies are handed over chunk by chunk as they arrive (so a file is hashed
/// while it is written, and a body is never read past a limit), each held to an idle
/// timeout and to its `TransferBounds` (`TransferWatch`: a minimum rate over each window,
/// a deadline for metadata).
///
/// The transfers are the platform's (`HTTPTransport`): Foundation's `URLSession` on Apple
/// platforms (`URLSessionTransport`), libcurl on Linux (`CurlTransport`), where
/// swift-corelibs-foundation's `URLSession` queues the body without back-pressure and cannot
/// stop one that keeps arriving. One `HTTPStream` serves every request of a `ModelUpdater`,
/// so the manifest, its signature and the files share connections. A request that fails (a
/// handler threw, a bound was reached, the calling task was cancelled) returns at once, and
/// its transfer is stopped.
final class HTTPStream: Sendable {
    /// What the response head said; throwing ends the request with that error.
    typealias ResponseHandler = (HTTPURLResponse) throws -> Void
    /// Each body chunk, in order; throwing ends the request with that error.
    typealias DataHandler = (Data) throws -> Void

    private let transport: PlatformTransport
    private let bounds: TransferBounds
    /// Where the watches' timers run.
    private let watchQueue = DispatchQueue(label: "modelcast.transfer-watch")

    /// `timeout`: seconds a request may wait for data before it counts as dropped.
    /// `bounds`: the rate and deadline each request is held to.
    /// `base`: the app's own session configuration (what each transport takes from it:
    /// `URLSessionTransport`, `CurlTransport`).
    init(timeout: TimeInterval, bounds: TransferBounds, base: URLSessionConfiguration? = nil) {
        transport = PlatformTransport(timeout: timeout, base: base)
        self.bounds = bounds
    }

    /// Lets go of the transport once its requests are done (a session holds its delegate until then).
    func invalidate() {
        transport.invalidate()
    }

    /// Sends `request` and streams its answer; returns the response once the body is
    /// complete. `metadata`: the request is held to the metadata deadline too.
    /// Cancelling the calling task ends the request at once and throws `CancellationError`.
    func get(_ request: URLRequest, metadata: Bool, onResponse: @escaping ResponseHandler, onData: @escaping DataHandler) async throws -> HTTPURLResponse {
        try Task.checkCancellation()
        let request = UnmeteredOnly.applied(to: request)
        let pending = PendingRequest(url: request.url?.absoluteString ?? "", onResponse: onResponse, onData: onData)
        let transfer = transport.transfer(request, for: pending)
        let bounds = self.bounds, watchQueue = self.watchQueue
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    let started = pending.start(continuation, stop: transfer.stop) {
                        TransferWatch(pending, bounds: bounds, metadata: metadata, queue: watchQueue)
                    }
                    if started { transfer.start() } else { transfer.stop() }
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
        case manifest, signature, segmentIndex, keySet, signatureList

        func tooLarge(url: String, limit: Int) -> ClientError {
            switch self {
            case .manifest: return .manifestTooLarge(url: url, limit: limit)
            case .signature: return .tooLarge(url: url, object: "signature", limit: Int64(limit))
            case .segmentIndex: return .tooLarge(url: url, object: "segment index", limit: Int64(limit))
            case .keySet: return .tooLarge(url: url, object: "key set", limit: Int64(limit))
            case .signatureList: return .tooLarge(url: url, object: "signature list", limit: Int64(limit))
            }
        }
    }

    /// A small object's bytes as they arrive (handlers run one at a time).
    // @unchecked: a plain var, appended to by one request's handlers, which run one at a
    // time (under the request's lock); read after the request has ended.
    private final class SmallBody: @unchecked Sendable {
        var data = Data()
    }
}
