import Foundation
import NIOConcurrencyHelpers

/// Collects a small body.
final class ByteCollector: Sendable {
    private let bytes = NIOLockedValueBox(Data())

    @Sendable func append(_ chunk: UnsafeRawBufferPointer) throws {
        bytes.withLockedValue { $0.append(contentsOf: chunk) }
    }

    @Sendable func reset() {
        bytes.withLockedValue { $0.removeAll() }
    }

    var data: Data {
        bytes.withLockedValue { $0 }
    }
}

/// Hashes a streamed body (restartable for retries) and keeps its first bytes.
final class HashingSink: Sendable {
    // @unchecked: SHA256Hasher is a mutable class (an OpenSSL context), not Sendable.
    // State is private to HashingSink and only ever reached through `state`'s lock.
    private struct State: @unchecked Sendable {
        /// nil until the first chunk (and again after a reset): made where a failure can be thrown.
        var hasher: SHA256Hasher?
        var head: [UInt8] = []
    }
    private let state = NIOLockedValueBox(State())
    private let progress: ProgressReporter?

    init(progress: ProgressReporter?) { self.progress = progress }

    @Sendable func append(_ chunk: UnsafeRawBufferPointer) throws {
        try state.withLockedValue {
            if $0.hasher == nil { $0.hasher = try SHA256Hasher() }
            $0.hasher?.update(chunk)
            if $0.head.count < 1024 { $0.head.append(contentsOf: chunk.prefix(1024 - $0.head.count)) }
        }
        progress?.advance(by: chunk.count)
    }

    @Sendable func reset() {
        state.withLockedValue { $0 = State() }
    }

    func finish() throws -> SHA256Digest {
        try state.withLockedValue { try ($0.hasher ?? SHA256Hasher()).finalize() }
    }

    func prefix(_ count: Int) -> [UInt8] {
        state.withLockedValue { Array($0.head.prefix(count)) }
    }
}

/// Hands a body to a consumer chunk by chunk, never more than `limit` bytes in all: what
/// every fetcher promises (`ObjectFetcher.fetch`).
struct LimitedBody {
    let limit: Int64
    let consume: @Sendable (UnsafeRawBufferPointer) throws -> Void
    /// Bytes handed over so far.
    private(set) var read: Int64 = 0
    /// True once a chunk went past the limit.
    private(set) var exceeded = false

    init(limit: Int64, consume: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Void) {
        self.limit = limit
        self.consume = consume
    }

    /// Hands over what of `chunk` fits; false once the limit is passed (stop reading).
    mutating func pass<Chunk: ContiguousBytes & Collection>(_ chunk: Chunk) throws -> Bool {
        let take = Int(min(Int64(chunk.count), limit - read))
        if take > 0 { try chunk.withUnsafeBytes { try consume(UnsafeRawBufferPointer(rebasing: $0[0..<take])) } }
        read += Int64(take)
        if take < chunk.count { exceeded = true }
        return !exceeded
    }
}
