import NIOConcurrencyHelpers
import NIOCore

/// Spreads the bodies an HTTP client reads over its event loops (one thread per core) and
/// says where each is hashed. While some loop reads no body, a body is hashed on its
/// consumer's queue, so the idle core hashes while the loop reads on (one big artifact).
/// Once every loop reads a body, every core already has a body to read and hash: a buffer is
/// then hashed on the loop that read it, which saves handing each 64 KiB buffer to another
/// thread (its wake-ups and the loop's read pauses cost a third of the CPU hashing takes).
final class BodyLanes: Sendable {
    /// One body's place: the loop it is read on.
    struct Lane: Sendable {
        let index: Int
        let eventLoop: EventLoop
    }

    private struct State {
        /// Bodies being read, per loop.
        var streams: [Int]
        /// Loops reading at least one body.
        var busyLoops = 0
    }

    private let loops: [EventLoop]
    private let state: NIOLockedValueBox<State>

    init(group: EventLoopGroup) {
        loops = Array(group.makeIterator())
        state = NIOLockedValueBox(State(streams: Array(repeating: 0, count: loops.count)))
    }

    /// The loop reading the fewest bodies, counted as reading one more until `close`.
    func open() -> Lane {
        state.withLockedValue { state in
            let index = state.streams.indices.min { state.streams[$0] < state.streams[$1] } ?? 0
            if state.streams[index] == 0 { state.busyLoops += 1 }
            state.streams[index] += 1
            return Lane(index: index, eventLoop: loops[index])
        }
    }

    /// The body read on `lane` is done.
    func close(_ lane: Lane) {
        state.withLockedValue { state in
            state.streams[lane.index] -= 1
            if state.streams[lane.index] == 0 { state.busyLoops -= 1 }
        }
    }

    /// True while every loop reads a body: hash on the loop that read the buffer.
    var hashOnLoop: Bool {
        state.withLockedValue { $0.busyLoops >= loops.count }
    }
}
