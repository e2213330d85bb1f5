import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A byte range of a file as an S3 request body, written through async-http-client's
/// stream writer as fast as the connection takes it: a new write goes out only while
/// fewer than `writesInFlight` are unacknowledged (the response delegate reports each
/// completed write), so memory stays flat whatever the part size.
///
/// On plain HTTP each write is a `FileRegion`: the kernel sends the page-cached bytes
/// (sendfile), with no copy through user space. Over TLS the bytes must be encrypted in
/// this process, so each write is a buffer read from the file.
///
/// The channel may still hold a region after the request has ended (an early answer, a
/// failure), and it reads the descriptor when it sends one, so the descriptor is closed
/// only once every byte was acknowledged as written; otherwise it is handed to
/// `OpenFiles`, which closes it after the HTTP client has shut down.
///
/// A file that cannot be opened or read, or that is shorter than the range, fails the
/// body with an error naming the path, recorded in `failure` for the request to throw.
final class FileBody: Sendable {
    /// Bytes per write: a file region (nothing held in memory), or a buffer, kept small
    /// so that the buffers of every part in flight stay a few MiB.
    static let regionSize = 1 << 20
    static let bufferSize = 256 << 10
    var chunkSize: Int { sendfile ? Self.regionSize : Self.bufferSize }
    let path: String
    let offset: Int64
    let length: Int64
    /// Send with sendfile (plain HTTP only).
    let sendfile: Bool
    /// Told how many of the range's bytes the socket took so far (each attempt from zero).
    let sent: (@Sendable (Int64) -> Void)?
    let failure = FileBodyFailure()
    /// Writes the channel may hold at once: the HTTP client's own back-pressure reacts too
    /// late to stop a fast reader from queueing dozens of buffers per request.
    static let writesInFlight = 2
    private struct State {
        /// The descriptor the writes read from.
        var handle: NIOFileHandle?
        /// Bytes handed to the writer, and bytes the channel reported written.
        var issued: Int64 = 0
        var written: Int64 = 0
        /// The request has ended (`release`).
        var released = false
        /// The writer, waiting for the channel to catch up.
        var waiter: CheckedContinuation<Void, Never>?

        /// Another write may go out: fewer than `limit` bytes unacknowledged, or the request ended.
        func mayWrite(limit: Int64) -> Bool { released || issued - written < limit }
    }
    private let state = NIOLockedValueBox(State())

    init(path: String, offset: Int64, length: Int64, sendfile: Bool, sent: (@Sendable (Int64) -> Void)?) {
        self.path = path
        self.offset = offset
        self.length = length
        self.sendfile = sendfile
        self.sent = sent
    }

    func body() -> HTTPClient.Body {
        .stream(contentLength: length) { writer in
            let promise = MultiThreadedEventLoopGroup.singleton.any().makePromise(of: Void.self)
            promise.completeWithTask { [self] in
                do { try await write(to: writer) } catch {
                    // Only the file's own errors: a write refused because the request ended
                    // (an early answer, a failure) is the HTTP client's to report.
                    if error is ModelCastError { failure.record(error) }
                    throw error
                }
            }
            return promise.futureResult
        }
    }

    /// Called by the response delegate for each write the channel completed.
    func acknowledge(_ part: IOData) {
        let (total, waiter) = state.withLockedValue { state in
            state.written += Int64(part.readableBytes)
            defer { state.waiter = nil }
            return (state.written, state.waiter)
        }
        waiter?.resume()
        sent?(total)
    }

    /// Closes the descriptor when the channel can no longer need it; otherwise parks it in
    /// `openFiles` until the HTTP client has shut down. Call once the request has ended.
    func release(into openFiles: OpenFiles) {
        let (handle, written, waiter) = state.withLockedValue { state in
            state.released = true
            defer { state.waiter = nil }
            return (state.handle, state.written, state.waiter)
        }
        waiter?.resume()
        guard let handle else { return }
        // The descriptor was only read from: a close that fails loses nothing.
        if written >= length { try? handle.close() } else { openFiles.park(handle) }
    }

    private func write(to writer: HTTPClient.Body.StreamWriter) async throws {
        let file = try FileDescriptor.openForReading(path)
        // The handle owns the descriptor from here on; `file` only reads through it.
        let fileHandle = NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: try file.takeDescriptor())
        let ended = state.withLockedValue { state in
            if !state.released { state.handle = fileHandle }
            return state.released
        }
        if ended {
            // The request ended before its body began: nothing was read from this descriptor,
            // so a close that fails loses nothing.
            try? fileHandle.close()
            throw HTTPClientError.cancelled
        }
        var position = offset
        let end = offset + length
        while position < end {
            let count = Int(min(Int64(chunkSize), end - position))
            let data: IOData
            if sendfile {
                // sendfile past the end of a file sends nothing and keeps trying: prove the range is there.
                let size = Int64(try file.status().st_size)
                guard size >= position + Int64(count) else { throw ModelCastError.changedWhilePacking(path: path, expected: end, actual: size) }
                data = .fileRegion(FileRegion(fileHandle: fileHandle, readerIndex: Int(position), endIndex: Int(position) + count))
            } else {
                var buffer = ByteBufferAllocator().buffer(capacity: count)
                let n = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { raw in
                    try file.read(at: position, into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<count]))
                }
                guard n == count else { throw ModelCastError.changedWhilePacking(path: path, expected: end, actual: position + Int64(n)) }
                data = .byteBuffer(buffer)
            }
            position += Int64(count)
            state.withLockedValue { $0.issued += Int64(count) }
            try await writer.write(data).get()
            await channelCatchUp()
        }
    }

    /// Waits until fewer than `writesInFlight` writes are unacknowledged, or the request ended.
    private func channelCatchUp() async {
        let limit = Int64(Self.writesInFlight * chunkSize)
        while !state.withLockedValue({ $0.mayWrite(limit: limit) }) {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLockedValue { state -> Bool in
                    if state.mayWrite(limit: limit) { return true }
                    state.waiter = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }
}

/// Descriptors a request body may still be sending from, closed once the HTTP client
/// has shut down (no channel left to read them).
final class OpenFiles: Sendable {
    private let handles = NIOLockedValueBox<[NIOFileHandle]>([])

    func park(_ handle: NIOFileHandle) {
        handles.withLockedValue { $0.append(handle) }
    }

    /// Call after the HTTP client has shut down.
    func closeAll() {
        // Descriptors only read from: a close that fails loses nothing.
        for handle in handles.withLockedValue({ list in defer { list = [] }; return list }) { try? handle.close() }
    }
}

/// Collects the (small) answer to a request with a file body and tells the body which
/// writes the channel completed.
final class FileBodyResponse: HTTPClientResponseDelegate {
    typealias Response = (head: HTTPResponseHead, body: ByteBuffer)
    private let body: FileBody
    private let limit: Int
    private let state = NIOLockedValueBox<(head: HTTPResponseHead?, body: ByteBuffer)>((nil, ByteBuffer()))

    init(body: FileBody, limit: Int) {
        self.body = body
        self.limit = limit
    }

    func didSendRequestPart(task: HTTPClient.Task<Response>, _ part: IOData) {
        body.acknowledge(part)
    }

    func didReceiveHead(task: HTTPClient.Task<Response>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        state.withLockedValue { $0.head = head }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Response>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        var part = buffer
        let size = state.withLockedValue { state in
            state.body.writeBuffer(&part)
            return state.body.readableBytes
        }
        if size > limit { return task.eventLoop.makeFailedFuture(FileBodyResponseTooLarge(size: size)) }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<Response>) throws -> Response {
        try state.withLockedValue { state in
            guard let head = state.head else { throw HTTPClientError.remoteConnectionClosed }
            return (head, state.body)
        }
    }
}

struct FileBodyResponseTooLarge: Error {
    let size: Int
}

/// The error a file request body met reading its file, shared between the body
/// and the request that sends it: the first local file error of a streamed body.
final class FileBodyFailure: Sendable {
    private let stored = NIOLockedValueBox<(any Error)?>(nil)

    var error: Error? {
        stored.withLockedValue { $0 }
    }

    func record(_ error: Error) {
        stored.withLockedValue { if $0 == nil { $0 = error } }
    }
}
