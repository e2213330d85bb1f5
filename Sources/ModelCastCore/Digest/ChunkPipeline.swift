import Foundation

/// Moves bytes from a producing thread to one consuming thread through a small,
/// fixed pool of buffers. Reading (or archiving) on one core overlaps with hashing
/// and writing on the other, and memory stays at `bufferSize * bufferCount`
/// whatever the input size.
///
/// The producer calls `fill` (read straight into a pool buffer, no copy) or
/// `append` (copy bytes in), then `finish()`. Chunks reach `consume` in order.
final class ChunkPipeline: @unchecked Sendable {
    /// Default chunk size: large enough that per-chunk overhead vanishes next to
    /// SHA-256 at over 1 GB/s, small enough that four of them stay far below 64 MiB.
    static let defaultBufferSize = 4 << 20
    static let defaultBufferCount = 4

    private let bufferSize: Int
    private let condition = NSCondition()
    private var freeBuffers: [UnsafeMutableRawBufferPointer] = []
    private var filledBuffers: [(UnsafeMutableRawBufferPointer, Int)] = []
    private var allBuffers: [UnsafeMutableRawBufferPointer] = []
    private var closed = false
    private var consumerFinished = false
    private var consumerError: Error?
    private let consume: (UnsafeRawBufferPointer) throws -> Void

    // Producer-side state: the buffer `append` is filling. Touched by the producer only.
    private var current: UnsafeMutableRawBufferPointer?
    private var currentCount = 0

    /// Starts the consumer thread.
    init(
        bufferSize: Int = ChunkPipeline.defaultBufferSize,
        bufferCount: Int = ChunkPipeline.defaultBufferCount,
        consume: @escaping (UnsafeRawBufferPointer) throws -> Void
    ) {
        self.bufferSize = bufferSize
        self.consume = consume
        for _ in 0..<max(2, bufferCount) {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 4096)
            allBuffers.append(buffer)
            freeBuffers.append(buffer)
        }
        let thread = Thread { [self] in self.runConsumer() }
        thread.name = "modelcast-digest"
        thread.start()
    }

    deinit {
        close()
        for buffer in allBuffers { buffer.deallocate() }
    }

    private func runConsumer() {
        condition.lock()
        while true {
            while filledBuffers.isEmpty && !closed { condition.wait() }
            if filledBuffers.isEmpty { break }
            let (buffer, count) = filledBuffers.removeFirst()
            let skip = consumerError != nil
            condition.unlock()
            var failure: Error?
            if !skip {
                do { try consume(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) } catch { failure = error }
            }
            condition.lock()
            if let failure, consumerError == nil { consumerError = failure }
            freeBuffers.append(buffer)
            condition.broadcast()
        }
        consumerFinished = true
        condition.broadcast()
        condition.unlock()
    }

    /// Waits for a free buffer; throws the consumer's error if it has failed.
    private func takeFreeBuffer() throws -> UnsafeMutableRawBufferPointer {
        condition.lock()
        defer { condition.unlock() }
        while freeBuffers.isEmpty && consumerError == nil { condition.wait() }
        if let consumerError { throw consumerError }
        return freeBuffers.removeLast()
    }

    private func enqueue(_ buffer: UnsafeMutableRawBufferPointer, count: Int) {
        condition.lock()
        if count > 0 { filledBuffers.append((buffer, count)) } else { freeBuffers.append(buffer) }
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
    /// rethrows the consumer's error if it failed.
    func finish() throws {
        try flushCurrent()
        close()
        condition.lock()
        let error = consumerError
        condition.unlock()
        if let error { throw error }
    }

    /// Stops accepting chunks and waits for the consumer thread to drain and exit.
    /// Safe to call more than once.
    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        while !consumerFinished { condition.wait() }
        condition.unlock()
    }
}
