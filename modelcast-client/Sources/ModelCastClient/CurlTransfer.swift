#if os(Linux)
import CCurl
import Foundation
import FoundationNetworking
import Synchronization

/// One request through libcurl, performed on a thread of its own (`curl_easy_perform`
/// blocks until the transfer ends), whose callbacks run on that thread, inside libcurl:
/// - Each body chunk goes to the request's handler there, so nothing more is read while
///   it is hashed and written (back-pressure: no backlog in memory however fast the
///   server sends), and one the request refuses (it has ended: a handler threw, a bound
///   was reached, the caller cancelled) aborts the transfer at once, closing the connection.
/// - The response head goes to the request with the first body chunk, or at the end of a
///   body-less answer. A redirect's head does not: the transfer follows it itself, as
///   swift-corelibs-foundation did (301–303, 305–308 with a `Location`, up to 20, to http
///   and https only, with the request's own headers), skipping the redirect's body and
///   leaving it once it is longer than one read. (libcurl's own following reads a
///   redirect's body to its end, which may never come.)
/// - The progress callback, which libcurl calls at least once a second even while nothing
///   arrives, aborts the transfer once it was stopped, or once nothing (no head line, no
///   body byte) has arrived for the idle timeout.
// @unchecked: `stopped` is atomic; every var is touched only by the thread that performs
// the transfer (libcurl runs the callbacks there); the lets are set in init.
final class CurlTransfer: @unchecked Sendable {
    /// The statuses followed when they come with a `Location`.
    static let redirects: Set<Int> = [301, 302, 303, 305, 306, 307, 308]
    /// Redirects followed at most (URLSession's limit).
    static let maxRedirects = 20

    private let url: String
    private let headers: [String]
    private let idleTimeout: TimeInterval
    private let pending: PendingRequest
    private let handles: CurlHandlePool
    private let stopped = Atomic<Bool>(false)
    /// The handle while the transfer runs.
    private var handle: UnsafeMutableRawPointer?
    private var head = CurlResponseHead()
    /// Whether the head was taken: to the request, or as a redirect (later header lines are
    /// trailers: ignored).
    private var headTaken = false
    /// Where the answer being received redirects to, and the bytes of its body skipped.
    private var redirect: String?
    private var skipped = 0
    /// Bytes of head lines and body so far, and when (µs into the transfer, libcurl's
    /// clock) the progress callback last saw that change.
    private var arrived = 0
    private var lastArrival = (bytes: 0, at: curl_off_t(0))
    private var timedOut = false

    init(url: String, headers: [String], idleTimeout: TimeInterval, pending: PendingRequest, handles: CurlHandlePool) {
        self.url = url
        self.headers = headers
        self.idleTimeout = idleTimeout
        self.pending = pending
        self.handles = handles
    }

    /// Performs the transfer on a new thread.
    @Sendable func start() {
        let thread = Thread { self.perform() }
        thread.name = "modelcast.curl"
        thread.start()
    }

    /// Has the transfer aborted at its next callback: at once while a body arrives, within
    /// a second while nothing does.
    @Sendable func stop() {
        stopped.store(true, ordering: .relaxed)
    }

    private func perform() {
        guard let handle = handles.take() else { return pending.complete("libcurl could not start a transfer") }
        self.handle = handle
        let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        var list: UnsafeMutablePointer<curl_slist>?
        for line in headers { list = curl_slist_append(list, line) }
        var code = configure(handle, headers: list, errorBuffer: errorBuffer)
        if code == CURLE_OK { code = performFollowingRedirects(handle) }
        finish(code, detail: String(cString: errorBuffer))
        // The reset unsets the pointers to the list and the buffer before they go.
        handles.give(handle)
        self.handle = nil
        curl_slist_free_all(list)
        errorBuffer.deallocate()
    }

    /// Performs the request, then each redirect it gets (the same options, another URL);
    /// the last transfer's outcome.
    private func performFollowingRedirects(_ handle: UnsafeMutableRawPointer) -> CURLcode {
        var code = curl_easy_perform(handle)
        var followed = 0
        while true {
            // A body-less answer's head is taken now: a redirect, or the request's response.
            if code == CURLE_OK, !takeHead() { return code }
            // A write error here is the redirect's body, left.
            guard let target = redirect, code == CURLE_OK || code == CURLE_WRITE_ERROR, !stopped.load(ordering: .relaxed) else { return code }
            guard followed < Self.maxRedirects else { return CURLE_TOO_MANY_REDIRECTS }
            followed += 1
            (head, headTaken, redirect, skipped) = (CurlResponseHead(), false, nil, 0)
            lastArrival = (arrived, 0)  // libcurl's clock starts again with each transfer
            code = modelcast_curl_set_string(handle, CURLOPT_URL, target)
            if code == CURLE_OK { code = curl_easy_perform(handle) }
        }
    }

    /// Sets the request's options; the first that libcurl refuses, else CURLE_OK.
    private func configure(_ handle: UnsafeMutableRawPointer, headers: UnsafeMutablePointer<curl_slist>?,
                           errorBuffer: UnsafeMutablePointer<CChar>) -> CURLcode {
        let me = Unmanaged.passUnretained(self).toOpaque()
        let codes = [
            modelcast_curl_set_string(handle, CURLOPT_URL, url),
            modelcast_curl_allow_http_only(handle),
            modelcast_curl_set_long(handle, CURLOPT_HTTPGET, 1),
            // Redirects are followed here (`performFollowingRedirects`), not by libcurl.
            modelcast_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0),
            // The bytes as the server sent them: never decoded (the client proves them).
            modelcast_curl_set_long(handle, CURLOPT_HTTP_CONTENT_DECODING, 0),
            modelcast_curl_set_pointer(handle, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headers)),
            modelcast_curl_set_string(handle, CURLOPT_USERAGENT, "modelcast-client"),
            // Threads: no signals (a timeout must not raise SIGALRM in the app).
            modelcast_curl_set_long(handle, CURLOPT_NOSIGNAL, 1),
            modelcast_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Int(idleTimeout * 1000)),
            modelcast_curl_set_long(handle, CURLOPT_BUFFERSIZE, CurlTransport.readSize),
            modelcast_curl_set_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer),
            modelcast_curl_set_write_callback(handle, CURLOPT_HEADERFUNCTION) { data, size, count, me in
                guard let data, let me else { return 0 }
                let transfer = Unmanaged<CurlTransfer>.fromOpaque(me).takeUnretainedValue()
                return transfer.headerLine(UnsafeRawBufferPointer(start: data, count: size * count)) ? size * count : 0
            },
            modelcast_curl_set_pointer(handle, CURLOPT_HEADERDATA, me),
            modelcast_curl_set_write_callback(handle, CURLOPT_WRITEFUNCTION) { data, size, count, me in
                guard let data, let me else { return 0 }
                let transfer = Unmanaged<CurlTransfer>.fromOpaque(me).takeUnretainedValue()
                return transfer.body(UnsafeRawBufferPointer(start: data, count: size * count)) ? size * count : 0
            },
            modelcast_curl_set_pointer(handle, CURLOPT_WRITEDATA, me),
            modelcast_curl_set_xferinfo_callback(handle) { me, _, _, _, _ in
                guard let me else { return 1 }
                return Unmanaged<CurlTransfer>.fromOpaque(me).takeUnretainedValue().goOn() ? 0 : 1
            },
            modelcast_curl_set_pointer(handle, CURLOPT_XFERINFODATA, me),
            modelcast_curl_set_long(handle, CURLOPT_NOPROGRESS, 0),
        ]
        return codes.first { $0 != CURLE_OK } ?? CURLE_OK
    }

    /// A head line; false aborts the transfer (it was stopped).
    private func headerLine(_ line: UnsafeRawBufferPointer) -> Bool {
        arrived &+= line.count
        if !headTaken { head.add(line) }
        return !stopped.load(ordering: .relaxed)
    }

    /// A body chunk, after the head; false aborts the transfer (the request has ended, or a
    /// redirect's body is longer than one read).
    private func body(_ chunk: UnsafeRawBufferPointer) -> Bool {
        arrived &+= chunk.count
        guard takeHead() else { return false }
        guard redirect == nil else {
            skipped += chunk.count
            return skipped <= CurlTransport.readSize
        }
        return pending.take(Data(chunk))
    }

    /// Takes the head once: a redirect's target, or the response, handed to the request;
    /// false when the request has ended.
    private func takeHead() -> Bool {
        guard !headTaken else { return true }
        headTaken = true
        guard let handle else { return false }
        var status = 0
        var effective: UnsafeMutablePointer<CChar>?
        _ = modelcast_curl_get_long(handle, CURLINFO_RESPONSE_CODE, &status)
        _ = modelcast_curl_get_string(handle, CURLINFO_EFFECTIVE_URL, &effective)
        let url = effective.flatMap { URL(string: String(cString: $0)) } ?? URL(string: self.url)
        guard let url, let response = head.response(url: url, status: status) else {
            pending.complete("the server's answer is not valid HTTP")
            return false
        }
        // A `Location` that is no URL makes the answer the final one, as in URLSession.
        if Self.redirects.contains(status), let location = response.value(forHTTPHeaderField: "Location"),
           let target = URL(string: location, relativeTo: url)?.absoluteURL {
            redirect = target.absoluteString
            return true
        }
        return pending.take(response)
    }

    /// The progress callback's question: false aborts the transfer (stopped, or idle for
    /// the timeout). The time is the one libcurl took for this call (no clock read here).
    private func goOn() -> Bool {
        guard !stopped.load(ordering: .relaxed) else { return false }
        guard let handle else { return false }
        var now: curl_off_t = 0
        _ = modelcast_curl_get_off_t(handle, CURLINFO_TOTAL_TIME_T, &now)
        if arrived != lastArrival.bytes {
            lastArrival = (arrived, now)
        } else if Double(now - lastArrival.at) >= idleTimeout * 1e6 {
            timedOut = true
            return false
        }
        return true
    }

    /// Ends the request with the transfer's outcome (nothing changes for a request that
    /// has ended: it was stopped, or a handler threw).
    private func finish(_ code: CURLcode, detail: String) {
        if code == CURLE_OK {
            // The head was taken (`performFollowingRedirects`); a request whose handler
            // refused it has ended, and this changes nothing.
            pending.complete(nil)
        } else if timedOut {
            pending.complete(curlFailureReason(CURLE_OPERATION_TIMEDOUT, detail: "", url: url, idleTimeout: idleTimeout))
        } else {
            pending.complete(curlFailureReason(code, detail: detail, url: url, idleTimeout: idleTimeout))
        }
    }
}
#endif
