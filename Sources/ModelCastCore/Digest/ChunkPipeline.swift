import Foundation

/// Moves bytes from a producing thread to consumer threads through a small, fixed
/// pool of buffers. Each consumer (say, the SHA-256 hasher and the file writer)
/// runs on its own thread and sees every chunk, in order; a buffer goes back to
/// the pool when all consumers are done with it. Reading, hashing and writing thus
/// overlap across cores, and memory stays at `bufferSize * bufferCount` whatever
/// the input size.
///
/// The producer calls `fill` (read straight into a pool buffer, no copy) or
/// `append` (copy bytes in), then `finish()`.
// @unchecked: the buffer pool and queues are mutable state shared by the producer and
// the consumer threads; every access is under `condition` (an NSCondition), which the
// compiler cannot see.
final class ChunkPipeline: @unchecked Sendable {
    /// Large enough that per-chunk overhead vanishes next to SHA-256 at over 1 GB/s,
    /// small enough that the pool stays far below the 64 MiB memory budget.
    static let defaultBufferSize = 4 << 20
    static let defaultBufferCount = 4

    typealias Consumer = (UnsafeRawBufferPointer) throws -> Void

    private struct Chunk {
        let buffer: UnsafeMutableRawBufferPointer
        let count: Int
    }

    private let condition = NSCondition()
    private var freeBuffers: [UnsafeMutableRawBufferPointer] = []
    private var allBuffers: [UnsafeMutableRawBufferPointer] = []
    /// One FIFO per consumer.
    private var queues: [[Chunk]]
    /// How many consumers still hold each buffer (by base address).
    private var holders: [UnsafeMutableRawPointer: Int] = [:]
    private var closed = false
    private var runningConsumers: Int
    private var consumerError: Error?
    private let consumers: [Consumer]

    // Producer-side state: the buffer `append` is filling. Touched by the producer only.
    private var current: UnsafeMutableRawBufferPointer?
    private var currentCount = 0

    /// Starts one thread per consumer.
    init(
        bufferSize: Int = ChunkPipeline.defaultBufferSize,
        bufferCount: Int = ChunkPipeline.defaultBufferCount,
        consumers: [Consumer]
    ) {
        precondition(!consumers.isEmpty)
        self.consumers = consumers
        self.queues = Array(repeating: [], count: consumers.count)
        self.runningConsumers = consumers.count
        for _ in 0..<max(2, bufferCount) {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 4096)
            allBuffers.append(buffer)
            freeBuffers.append(buffer)
        }
        for index in consumers.indices {
            let thread = Thread { [self] in self.runConsumer(index) }
            thread.name = "modelcast-pipeline-\(index)"
            thread.start()
        }
    }

    /// A pipeline with a single consumer.
    convenience init(bufferSize: Int = ChunkPipeline.defaultBufferSize, bufferCount: Int = ChunkPipeline.defaultBufferCount, consume: @escaping Consumer) {
        self.init(bufferSize: bufferSize, bufferCount: bufferCount, consumers: [consume])
    }

    deinit {
        close()
        for buffer in allBuffers { buffer.deallocate() }
    }

    private func runConsumer(_ index: Int) {
        let consume = consumers[index]
        condition.lock()
        while true {
            while queues[index].isEmpty && !closed { condition.wait() }
            if queues[index].isEmpty { break }
            let chunk = queues[index].removeFirst()
            let skip = consumerError != nil
            condition.unlock()
            var failure: Error?
            if !skip {
                do { try consume(UnsafeRawBufferPointer(rebasing: chunk.buffer[0..<chunk.count])) } catch { failure = error }
            }
            condition.lock()
            if let failure, consumerError == nil { consumerError = failure }
            release(chunk.buffer)
            condition.broadcast()
        }
        runningConsumers -= 1
        condition.broadcast()
        condition.unlock()
    }

    /// Called with the lock held.
    private func release(_ buffer: UnsafeMutableRawBufferPointer) {
        let key = buffer.baseAddress!
        let remaining = (holders[key] ?? 1) - 1
        if remaining == 0 {
            holders[key] = nil
            freeBuffers.append(buffer)
        } else {
            holders[key] = remaining
        }
    }

    /// Waits for a free buffer; throws the first consumer error.
    private func takeFreeBuffer() throws -> UnsafeMutableRawBufferPointer {
        condition.lock()
        defer { condition.unlock() }
        while freeBuffers.isEmpty && consumerError == nil { condition.wait() }
        if let consumerError { throw consumerError }
        return freeBuffers.removeLast()
    }

    private func enqueue(_ buffer: UnsafeMutableRawBufferPointer, count: Int) {
        condition.lock()
        if count > 0 {
            holders[buffer.baseAddress!] = queues.count
            for index in queues.indices { queues[index].append(Chunk(buffer: buffer, count: count)) }
        } else {
            freeBuffers.append(buffer)
        }
        condition.broadcast()
        condition.unlock()
    }

    /// Lets `body` write up to one buffer's worth of bytes in place and queues
    /// what it wrote. Returns the byte count `body` reported (0 means end of input).
    @discardableResult
    func fill(_ body: (UnsafeMutableRawBufferPointer) throws -> Int) throws -> Int {
        try flushCurrent()
        let buffer = try takeFreeBuffer()
        let count: Int
        do { count = try body(buffer) } catch {
            enqueue(buffer, count: 0)
            throw error
        }
        precondition(count >= 0 && count <= buffer.count)
        enqueue(buffer, count: count)
        return count
    }

    /// Copies bytes into the pipeline, queuing each buffer as it fills.
    func append(_ bytes: UnsafeRawBufferPointer) throws {
        var remaining = bytes
        while !remaining.isEmpty {
            if current == nil {
                current = try takeFreeBuffer()
                currentCount = 0
            }
            let target = current!
            let n = min(remaining.count, target.count - currentCount)
            UnsafeMutableRawBufferPointer(rebasing: target[currentCount..<(currentCount + n)])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: remaining[0..<n]))
            currentCount += n
            remaining = UnsafeRawBufferPointer(rebasing: remaining[n...])
            if currentCount == target.count { try flushCurrent() }
        }
    }

    private func flushCurrent() throws {
        guard let buffer = current else { return }
        current = nil
        enqueue(buffer, count: currentCount)
        currentCount = 0
    }

    /// Queues the last partial buffer, waits until every chunk was consumed, and
    /// rethrows the first consumer error.
    func finish() throws {
        try flushCurrent()
        close()
        condition.lock()
        let error = consumerError
        condition.unlock()
        if let error { throw error }
    }

    /// Stops accepting chunks and waits for the consumer threads to drain and exit.
    /// Safe to call more than once.
    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        while runningConsumers > 0 { condition.wait() }
        condition.unlock()
    }
}
