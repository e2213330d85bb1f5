import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// Runs a body consumer (a hasher) on its own serial queue, fed the response's buffers
/// by the event loop as they arrive, so receiving and hashing overlap on two cores: the
/// event loop goes on reading while earlier buffers are hashed. Buffers are handed over as they
/// are (a `ByteBuffer` slice, no copy). At most `highWater` bytes (1 MiB: 16 of NIO's
/// 64 KiB reads, about a millisecond of hashing) wait at a time: the
/// reader waits beyond that, so memory stays flat however fast the server sends.
final class BodyConsumer: Sendable {
    private struct State {
        /// Bytes queued and not yet consumed.
        var pending = 0
        /// The reader, parked until `pending` is at most `waiterLimit`.
        var waiter: Waiter?
        var waiterLimit = 0
        var error: Error?
    }

    /// Who waits for the queue to drain: the event loop (reading pauses until the promise
    /// completes) or a task.
    private enum Waiter {
        case eventLoop(EventLoopPromise<Void>)
        case task(CheckedContinuation<Void, Never>)

        func resume() {
            switch self {
            case .eventLoop(let promise): promise.succeed(())
            case .task(let continuation): continuation.resume()
            }
        }
    }

    private let consume: @Sendable (UnsafeRawBufferPointer) throws -> Void
    private let queue = DispatchQueue(label: "modelcast.verify.body")
    private let state = NIOLockedValueBox(State())
    private let highWater: Int

    init(highWater: Int = 1 << 20, consume: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Void) {
        self.consume = consume
        self.highWater = highWater
    }

    /// Queues `buffer` for the consumer. The future completes at once while little is
    /// queued; past the high water it completes once the consumer is halfway through, so
    /// the event loop stops reading meanwhile. It fails with the consumer's error once the
    /// consumer has failed (nothing more is consumed after that).
    func submit(_ buffer: ByteBuffer, on eventLoop: EventLoop) -> EventLoopFuture<Void> {
        let count = buffer.readableBytes
        let failure: Error? = state.withLockedValue { state in
            if state.error == nil { state.pending += count }
            return state.error
        }
        if let failure { return eventLoop.makeFailedFuture(failure) }
        queue.async { [self] in
            let skip = state.withLockedValue { $0.error != nil }
            var thrown: Error?
            if !skip {
                do { try buffer.withUnsafeReadableBytes { try consume($0) } } catch { thrown = error }
            }
            let waiter: Waiter? = state.withLockedValue { state in
                state.pending -= count
                if let thrown, state.error == nil { state.error = thrown }
                guard let waiter = state.waiter, state.pending <= state.waiterLimit || state.error != nil else { return nil }
                state.waiter = nil
                return waiter
            }
            waiter?.resume()
        }
        let promise: EventLoopPromise<Void>? = state.withLockedValue { state in
            guard state.pending > highWater, state.error == nil else { return nil }
            let promise = eventLoop.makePromise(of: Void.self)
            state.waiter = .eventLoop(promise)
            state.waiterLimit = highWater / 2
            return promise
        }
        guard let promise else { return eventLoop.makeSucceededVoidFuture() }
        return promise.futureResult.flatMapThrowing { [self] in
            if let failure = state.withLockedValue({ $0.error }) { throw failure }
        }
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
                    state.waiter = .task(continuation)
                    state.waiterLimit = limit
                    return true
                }
                if !parked { continuation.resume() }
            }
        }
    }
}
