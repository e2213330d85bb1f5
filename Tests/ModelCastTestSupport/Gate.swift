import Foundation

/// A one-shot signal between tasks: a fault hook holds one writer at a point
/// (`wait`) until the test, or the other writer, lets it go on (`open`) — the in-memory
/// counterpart of the fault proxy's `hold:NAME`.
package actor Gate {
    /// A gate not opened in time: the interleaving the test set up never happened.
    package struct TimedOut: Error, CustomStringConvertible {
        package let name: String
        package var description: String { "gate \(name) was never opened" }
    }

    package let name: String
    private var isOpen = false
    private var waiters: [Int: CheckedContinuation<Void, any Error>] = [:]
    private var next = 0

    package init(_ name: String) {
        self.name = name
    }

    /// Lets every waiter, and every later one, go on.
    package func open() {
        isOpen = true
        for waiter in waiters.values { waiter.resume() }
        waiters = [:]
    }

    /// True once opened.
    package var opened: Bool { isOpen }

    /// Waits until the gate opens; throws `TimedOut` after `seconds`, so a test whose
    /// interleaving never happens fails instead of hanging the suite.
    package func wait(seconds: Double = 60) async throws {
        if isOpen { return }
        let id = next
        next += 1
        let timeout = Task { [weak self] in
            try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            await self?.expire(id)
        }
        defer { timeout.cancel() }
        try await withCheckedThrowingContinuation { waiters[id] = $0 }
    }

    private func expire(_ id: Int) {
        waiters.removeValue(forKey: id)?.resume(throwing: TimedOut(name: name))
    }
}
