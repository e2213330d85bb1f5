#if os(Linux)
import CCurl
import Foundation
import FoundationNetworking

/// `HTTPStream`'s transport on Linux: libcurl's easy interface, each request performed on a
/// thread of its own (`CurlTransfer`), its easy handle taken from a pool that keeps
/// connections open for the next request (`CurlHandlePool`), as one `URLSession` would.
///
/// Not swift-corelibs-foundation's `URLSession`, which is built on libcurl too: it hands
/// each ~16 KiB chunk to the delegate queue without back-pressure (an ordinary queue took a
/// process to 3.45 GiB in 6 s of an endless body), ignores the response disposition, and
/// cannot cancel a task whose body keeps arriving (`cancel()` waits on a queue the transfer
/// holds). Here a chunk is handled inside libcurl's callback, so nothing more is read
/// meanwhile, and a request that has ended aborts its transfer at the next chunk or within
/// a second when nothing arrives.
///
/// Of the app's `URLSessionConfiguration` (`base`) it uses the extra headers
/// (`httpAdditionalHeaders`, which the request's own override); the rest has no meaning
/// here or is the client's (cache and timeouts). Proxies are libcurl's: the `http_proxy`,
/// `https_proxy`, `all_proxy` and `no_proxy` environment variables (`connectionProxyDictionary`
/// is not read, as swift-corelibs-foundation did not read it either).
final class CurlTransport: HTTPTransport, Sendable {
    /// The most libcurl reads off a connection at once, so the largest chunk a handler
    /// gets, and the most read past a body's bound (the chunk that crosses it): a server
    /// that sends more than declared gets at most this much more read.
    static let readSize = 64 << 10

    private let handles = CurlHandlePool()
    private let idleTimeout: TimeInterval
    /// The app's extra headers, under the request's.
    private let additionalHeaders: [String: String]

    init(timeout: TimeInterval, base: URLSessionConfiguration?) {
        idleTimeout = timeout
        var headers: [String: String] = [:]
        for (name, value) in base?.httpAdditionalHeaders ?? [:] {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        additionalHeaders = headers
    }

    func transfer(_ request: URLRequest, for pending: PendingRequest) -> HTTPTransfer {
        let transfer = CurlTransfer(url: request.url?.absoluteString ?? "", headers: headerLines(request), idleTimeout: idleTimeout,
                                    pending: pending, handles: handles)
        return HTTPTransfer(start: transfer.start, stop: transfer.stop)
    }

    func invalidate() {
        handles.invalidate()
    }

    /// The request's header lines as libcurl takes them ("Name: value", "Name;" for an
    /// empty value): the app's extra headers, each replaced by the request's of the same
    /// name (in any case).
    private func headerLines(_ request: URLRequest) -> [String] {
        let own = request.allHTTPHeaderFields ?? [:]
        let ownNames = Set(own.keys.map { $0.lowercased() })
        let merged = additionalHeaders.filter { !ownNames.contains($0.key.lowercased()) }.merging(own) { $1 }
        return merged.sorted { $0.key < $1.key }.map { $0.value.isEmpty ? "\($0.key);" : "\($0.key): \($0.value)" }
    }
}
#endif
