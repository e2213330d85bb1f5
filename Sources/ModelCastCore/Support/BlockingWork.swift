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
