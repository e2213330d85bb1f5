import Foundation

/// What an interrupted run (SIGINT, SIGTERM, SIGHUP) removes and says before it ends by
/// the signal (a shell shows 128 + its number: 130 for Ctrl-C, 143 for `kill`).
///
/// - Temporary files in flight are always removed.
/// - What the run stored in a directory target that no release names yet (its objects
///   and the folders made for them) is removed until the commit begins.
/// - Staging directories are removed when empty (after the files above).
/// - One line says what happened, from the message the command set (`setMessage`).
///
/// A commit (history record, hosting files, signature, manifest) is never cut in two: a
/// signal that arrives during one waits for the manifest write (`endCommit`), then the run
/// ends saying what went live. A second signal ends it at once.
///
/// The handler may only make async-signal-safe calls (unlink, rmdir, write, signal,
/// raise), so everything it reads lives in fixed tables of C strings outside any lock: it
/// must never wait for a lock another thread holds. `lock` orders writers among threads
/// only. That is a contract the compiler cannot check, hence `@unchecked`.
package final class Interrupts: @unchecked Sendable {
    package static let shared = Interrupts()
    static let capacity = 256
    private let lock = NSLock()
    private var installed = false

    private init() {
        for table in [temporaryTable, uncommittedTable, directoryTable] { table.initialize(repeating: nil, count: Self.capacity) }
        messageTable.initialize(repeating: nil, count: Self.signals.count)
    }

    /// The signals handled, in `messageTable`'s order.
    static let signals: [(number: Int32, name: String)] = [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM"), (SIGHUP, "SIGHUP")]

    // MARK: What is removed

    /// A temporary file being written: removed on an interrupt.
    func registerTemporary(_ path: String) { add(path, to: temporaryTable) }
    func unregisterTemporary(_ path: String) { remove(path, from: temporaryTable) }

    /// A file or folder this run created in a target, which no release names yet: removed
    /// on an interrupt until the commit begins. Folders are removed only when empty.
    func registerUncommitted(_ path: String) {
        // During a commit everything written is about to be named (or undone by the commit).
        guard commitDepth == 0 else { return }
        add(path, to: uncommittedTable)
    }

    /// A staging directory: removed on an interrupt when empty.
    func registerDirectory(_ path: String) { add(path, to: directoryTable) }
    func unregisterDirectory(_ path: String) { remove(path, from: directoryTable) }

    // MARK: What is said

    /// The command's line for an interrupt before its commit: what is true then (nothing
    /// went live) and how to go on. Installs the handlers.
    package func setMessage(_ text: String) {
        lock.lock()
        defer { lock.unlock() }
        installHandlers()
        for (index, signal) in Self.signals.enumerated() {
            replaceMessage(at: index, with: "interrupted by \(signal.name): \(text)\n")
        }
    }

    /// The commit begins: a signal now waits for `endCommit`, and what the run stored is
    /// about to be named by a history record, so it is no longer removed on an interrupt.
    func beginCommit() {
        lock.lock()
        defer { lock.unlock() }
        clear(uncommittedTable)
        commitDepth += 1
    }

    /// The commit ended. `live` says what went live (nil: it failed and was undone, so the
    /// command's own message is true again). A signal that waited ends the run now.
    func endCommit(live: String?) {
        lock.lock()
        if let live {
            for index in Self.signals.indices { replaceMessage(at: index, with: "interrupted by \(Self.signals[index].name) \(live)\n") }
        }
        commitDepth -= 1
        let waiting = pendingSignal
        lock.unlock()
        if commitDepth == 0, waiting != 0 { removeAndDie(waiting) }
    }

    /// Under `lock`. The old string is never freed: a handler running on another thread
    /// may be writing it out at this moment (a few bytes per command, once or twice).
    private func replaceMessage(at index: Int, with line: String) {
        messageTable[index] = strdup(line)
    }

    // MARK: Tables

    private let temporaryTable = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: Interrupts.capacity)
    private let uncommittedTable = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: Interrupts.capacity)
    private let directoryTable = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: Interrupts.capacity)
    private let messageTable = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: Interrupts.signals.count)

    private func add(_ path: String, to table: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) {
        lock.lock()
        defer { lock.unlock() }
        installHandlers()
        for index in 0..<Self.capacity where table[index] == nil {
            table[index] = strdup(path)
            return
        }
    }

    private func remove(_ path: String, from table: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) {
        lock.lock()
        defer { lock.unlock() }
        for index in 0..<Self.capacity {
            if let entry = table[index], strcmp(entry, path) == 0 {
                table[index] = nil
                free(entry)
                return
            }
        }
    }

    private func clear(_ table: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) {
        for index in 0..<Self.capacity {
            if let entry = table[index] {
                table[index] = nil
                free(entry)
            }
        }
    }

    /// Under `lock`.
    private func installHandlers() {
        guard !installed else { return }
        installed = true
        waitLine = strdup("finishing the manifest write before stopping (interrupt again to stop at once)\n")
        interruptState = self
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for signal in Self.signals {
            Platform.setSignalHandler(signal.number, handleInterrupt)
            sigaddset(&unblock, signal.number)
        }
        // A parent may have started us with these blocked; they must reach the handler.
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
    }

    /// Removes what is registered, says the line, and ends the process by `sig`.
    /// Async-signal-safe: unlink, rmdir, write, signal, raise.
    fileprivate func removeAndDie(_ sig: Int32) {
        for index in 0..<Self.capacity { if let path = temporaryTable[index] { unlink(path) } }
        for index in 0..<Self.capacity { if let path = uncommittedTable[index] { unlink(path) } }
        // Folders newest first: a folder made for an object is made after its parent.
        for index in (0..<Self.capacity).reversed() { if let path = uncommittedTable[index] { rmdir(path) } }
        for index in (0..<Self.capacity).reversed() { if let path = directoryTable[index] { rmdir(path) } }
        if let slot = Self.signals.firstIndex(where: { $0.number == sig }), let line = messageTable[slot] {
            _ = write(2, line, strlen(line))
        }
        Platform.resetSignal(sig)
        raise(sig)
    }

    /// A signal during a commit: remembered, once; the second ends the run at once.
    fileprivate func deferDuringCommit(_ sig: Int32) -> Bool {
        guard commitDepth > 0, pendingSignal == 0 else { return false }
        pendingSignal = sig
        if let line = waitLine { _ = write(2, line, strlen(line)) }
        return true
    }
}

// Read by the handler without a lock (see Interrupts); aligned 32-bit loads and stores.
nonisolated(unsafe) private var interruptState: Interrupts?
nonisolated(unsafe) private var commitDepth: Int32 = 0
nonisolated(unsafe) private var pendingSignal: Int32 = 0
nonisolated(unsafe) private var waitLine: UnsafeMutablePointer<CChar>?

private func handleInterrupt(_ sig: Int32) {
    guard let state = interruptState else {
        signal(sig, SIG_DFL)
        raise(sig)
        return
    }
    if state.deferDuringCommit(sig) { return }
    state.removeAndDie(sig)
}
