import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How `HTTPStream` moves bytes on this platform: it makes one transfer per request, whose
/// callbacks hand the response head and each body chunk to the request's `PendingRequest`
/// (`take`) in order and one at a time, and end it (`complete`) when the transfer ends.
protocol HTTPTransport: Sendable {
    /// `timeout`: seconds a transfer may wait for data (an idle timeout, which every byte
    /// resets). `base`: the app's session configuration, for what the transport can use of it.
    init(timeout: TimeInterval, base: URLSessionConfiguration?)
    /// A transfer of `request` for `pending`, not yet started.
    func transfer(_ request: URLRequest, for pending: PendingRequest) -> HTTPTransfer
    /// Lets go of connections and sessions once the requests under way are done.
    func invalidate()
}

/// One request's transfer, as its transport made it.
struct HTTPTransfer: Sendable {
    /// Starts it (once).
    let start: @Sendable () -> Void
    /// Stops it, started or not, from any thread and without waiting: the request has
    /// failed, and nothing more of its body may be read (past what is already on its way).
    let stop: @Sendable () -> Void
}

#if os(Linux)
/// libcurl: swift-corelibs-foundation's `URLSession` queues the body without back-pressure
/// and cannot stop a body that keeps arriving (`CurlTransport`).
typealias PlatformTransport = CurlTransport
#else
typealias PlatformTransport = URLSessionTransport
#endif
