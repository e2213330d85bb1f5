import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// Runs a body consumer (a hasher) on its own serial queue, fed the response's buffers
/// as they arrive, so receiving and hashing overlap: async-http-client reads the next
/// buffer only once the previous one is taken (its body sequence buffers one element),
/// and taking one here costs a queue hop, not a hash. Buffers are handed over as they
/// are (a `ByteBuffer` slice, no copy). At most `highWater` bytes (1 MiB: 16 of NIO's
/// 64 KiB reads, about a millisecond of hashing) wait at a time: the
/// reader waits beyond that, so memory stays flat however fast the server sends.
final class BodyConsumer: Sendable {
    private struct State {
        /// Bytes queued and not yet consumed.
        var pending = 0
        /// The reader, parked until `pending` is at most `waiterLimit`.
        var waiter: CheckedContinuation<Void, Never>?
        var waiterLimit = 0
        var error: Error?
    }

    private let consume: @Sendable (UnsafeRawBufferPointer) throws -> Void
    private let queue = DispatchQueue(label: "modelcast.verify.body")
    private let state = NIOLockedValueBox(State())
    private let highWater: Int

    init(highWater: Int = 1 << 20, consume: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Void) {
        self.consume = consume
        self.highWater = highWater
    }

    /// Queues `buffer` for the consumer; waits while too much is queued. Throws the
    /// consumer's error, once it has failed (nothing more is consumed after that).
    func submit(_ buffer: ByteBuffer) async throws {
        let count = buffer.readableBytes
        let failure: Error? = state.withLockedValue { state in
            if state.error == nil { state.pending += count }
            return state.error
        }
        if let failure { throw failure }
        queue.async { [self] in
            let skip = state.withLockedValue { $0.error != nil }
            var thrown: Error?
            if !skip {
                do { try buffer.withUnsafeReadableBytes { try consume($0) } } catch { thrown = error }
            }
            let waiter: CheckedContinuation<Void, Never>? = state.withLockedValue { state in
                state.pending -= count
                if let thrown, state.error == nil { state.error = thrown }
                guard let waiter = state.waiter, state.pending <= state.waiterLimit || state.error != nil else { return nil }
                state.waiter = nil
                return waiter
            }
            waiter?.resume()
        }
        // Past the high water, wait until the consumer is halfway through what is queued.
        if state.withLockedValue({ $0.pending > highWater }) { await waitBelow(highWater / 2) }
        if let failure = state.withLockedValue({ $0.error }) { throw failure }
    }

    /// Waits until every queued buffer has been consumed; throws the consumer's error.
    /// Call it on every path out of a fetch (success or not), so nothing is consumed
    /// after the fetch has returned (a retry resets the consumer).
    func finish() async throws {
        await drain()
        if let failure = state.withLockedValue({ $0.error }) { throw failure }
    }

    /// Waits until every queued buffer has been consumed (or skipped after a failure).
    func drain() async {
        await waitBelow(0)
    }

    /// Suspends until at most `limit` bytes are queued (or the consumer failed).
    private func waitBelow(_ limit: Int) async {
        while state.withLockedValue({ $0.pending > limit && $0.error == nil }) {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let parked = state.withLockedValue { state -> Bool in
                    guard state.pending > limit, state.error == nil else { return false }
                    state.waiter = continuation
                    state.waiterLimit = limit
                    return true
                }
                if !parked { continuation.resume() }
            }
        }
    }
}
