#if os(Linux)
import CCurl
import Foundation

/// libcurl's global state, set up once before the first handle (left to
/// `curl_easy_init`, it would be set up without a lock on libcurl older than 7.84).
private let curlReady: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

/// Easy handles between requests. A handle keeps its connections (and its DNS and TLS
/// session caches) when its options are reset, so the next request to the same host
/// reuses the connection the last one left open, as one `URLSession` would. A handle is
/// used by one request at a time: it leaves the pool while its request runs.
// @unchecked: the list of idle handles and `invalidated` are touched only under `lock`.
final class CurlHandlePool: @unchecked Sendable {
    /// Idle handles kept (the client runs at most four requests at once: a delta update's
    /// segment fetches); more are cleaned up as they come back.
    static let keep = 4

    private let lock = NSLock()
    private var idle: [UnsafeMutableRawPointer] = []
    private var invalidated = false

    /// An idle handle with its options at libcurl's defaults, or a new one; nil when
    /// libcurl cannot make one (out of memory, or its global setup failed).
    func take() -> UnsafeMutableRawPointer? {
        lock.lock()
        let handle = idle.popLast()
        lock.unlock()
        if let handle { return handle }
        guard curlReady else { return nil }
        return curl_easy_init()
    }

    /// A handle whose request is over: its options reset (nothing of that request's, its
    /// callbacks' pointers included, stays set), kept for the next request or cleaned up.
    func give(_ handle: UnsafeMutableRawPointer) {
        curl_easy_reset(handle)
        lock.lock()
        let keep = !invalidated && idle.count < Self.keep
        if keep { idle.append(handle) }
        lock.unlock()
        if !keep { curl_easy_cleanup(handle) }
    }

    /// Closes the idle handles' connections; handles still in use are cleaned up as they come back.
    func invalidate() {
        lock.lock()
        invalidated = true
        let handles = idle
        idle = []
        lock.unlock()
        for handle in handles { curl_easy_cleanup(handle) }
    }

    deinit {
        for handle in idle { curl_easy_cleanup(handle) }
    }
}
#endif
