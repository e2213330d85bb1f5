import Foundation

/// Runs blocking work (file reads and hashing that wait on disk, Dispatch's
/// `concurrentPerform`) on a thread of its own and awaits its result, so it never holds
/// one of the few threads Swift's cooperative pool runs every task on.
func onOwnThread<T: Sendable>(_ name: String, _ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try work() }) }
        thread.name = name
        thread.start()
    }
}

/// `transform` applied to every item, at most `concurrency` at a time; results in item
/// order. The first error thrown cancels the transforms still running and is thrown.
/// Every bounded fan-out (object checks, part uploads, content proofs, record reads) goes
/// through here.
func boundedMap<Item: Sendable, Result: Sendable>(
    _ items: [Item], concurrency: Int, _ transform: @escaping @Sendable (Item) async throws -> Result
) async throws -> [Result] {
    try await withThrowingTaskGroup(of: (Int, Result).self) { group in
        var results = [Result?](repeating: nil, count: items.count)
        var next = 0
        func start() {
            let index = next
            group.addTask { (index, try await transform(items[index])) }
            next += 1
        }
        while next < min(max(1, concurrency), items.count) { start() }
        while let (index, result) = try await group.next() {
            results[index] = result
            if next < items.count { start() }
        }
        return results.map { $0! }
    }
}

/// `boundedMap` for a transform that cannot fail.
func boundedMap<Item: Sendable, Result: Sendable>(
    _ items: [Item], concurrency: Int, nonThrowing transform: @escaping @Sendable (Item) async -> Result
) async -> [Result] {
    // The throwing map rethrows only what the transform throws: nothing here.
    (try? await boundedMap(items, concurrency: concurrency) { item throws -> Result in await transform(item) }) ?? []
}

/// The one retry backoff: the wait before retry `attempt` (1, 2, …) doubles from 0.2 s up
/// to 5 s, plus up to half as much again at random (jitter, so clients that failed
/// together do not retry together). S3 requests and verify's fetches both use it.
enum Backoff {
    static func delay(beforeRetry attempt: Int) -> TimeInterval {
        let base = min(5.0, 0.2 * pow(2, Double(max(1, attempt) - 1)))
        return base + Double.random(in: 0...(base / 2))
    }

    /// Sleeps before retry `attempt`, never past `deadline`.
    static func wait(beforeRetry attempt: Int, deadline: Date = .distantFuture) async throws {
        let seconds = min(delay(beforeRetry: attempt), max(0, deadline.timeIntervalSinceNow))
        try await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
    }
}

/// Runs `operation`, throwing `onTimeout()` (and cancelling it) if `deadline` passes first.
func withDeadline<T: Sendable>(_ deadline: Date, onTimeout: @escaping @Sendable () -> Error, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            let nanoseconds = UInt64(max(0, deadline.timeIntervalSinceNow) * 1_000_000_000)
            try await Task.sleep(nanoseconds: nanoseconds)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw onTimeout() }
        guard let value = first else { throw onTimeout() }
        return value
    }
}
