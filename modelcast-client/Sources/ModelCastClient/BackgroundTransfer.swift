import Foundation
import ModelCastFormat

/// One download task an update waits for (`BackgroundSession`). Its end comes once, from
/// the first of: the session's completion, a refusal (a body past the file's size, an
/// error status, a file that cannot be moved), the caller's cancellation. A failed
/// transfer's task is stopped and its unproven file deleted.
// @unchecked: its mutable state (continuation, result, the staged file) is touched only
// under `lock` (an NSLock the compiler cannot see).
final class BackgroundTransfer: @unchecked Sendable {
    let file: CheckedFile
    let model: ModelName
    let url: String
    private let progress: @Sendable (Int64) -> Void
    private let lock = NSLock()
    private var continuation: CheckedContinuation<URL, Error>?
    private var result: Result<URL, Error>?
    /// The task's file, moved out of the system's hands, not yet proven.
    private var staged: URL?
    /// Stops the task; true keeps its resume data (set before the task starts).
    private var stopTask: ((Bool) -> Void)?
    private var reported: Int64 = 0

    /// Progress is reported every this many bytes (and at the end): the session's
    /// callbacks come every few KiB.
    static let progressStep: Int64 = 512 << 10

    init(file: CheckedFile, model: ModelName, url: String, progress: @escaping @Sendable (Int64) -> Void) {
        self.file = file
        self.model = model
        self.url = url
        self.progress = progress
    }

    /// True until the transfer has ended.
    var isOpen: Bool {
        lock.lock()
        defer { lock.unlock() }
        return result == nil
    }

    /// Hands the transfer its caller and the way to stop its task; false when it has
    /// already ended (cancelled before it started): the continuation then has its end.
    func start(_ continuation: CheckedContinuation<URL, Error>, stop: @escaping (Bool) -> Void) -> Bool {
        lock.lock()
        if let result {
            lock.unlock()
            continuation.resume(with: result)
            return false
        }
        self.continuation = continuation
        stopTask = stop
        lock.unlock()
        return true
    }

    /// The session wrote `total` bytes of an answer announced as `expected` (or -1, unknown):
    /// past the file's size it is refused at once, not when it ends.
    func wrote(_ total: Int64, expected: Int64) {
        if total > file.size || expected > file.size {
            fail(ClientError.sizeMismatch(model: model.rawValue, file: file.name.rawValue, expected: file.size, actual: max(total, expected)),
                 keepResumeData: false)
            return
        }
        lock.lock()
        let report = result == nil && (total - reported >= Self.progressStep || total == file.size)
        if report { reported = total }
        lock.unlock()
        if report { progress(total) }
    }

    /// The task's file, moved to `staged`; deleted if the transfer has already ended.
    func delivered(_ staged: URL) {
        lock.lock()
        let open = result == nil
        if open { self.staged = staged }
        lock.unlock()
        // Unproven, and proven again before any use: one that cannot be deleted waits for the tidy-up.
        if !open { try? FileManager.default.removeItem(at: staged) }
    }

    /// The session's end of the task: its error, else the file it delivered.
    func complete(_ error: Error?, idleTimeout: TimeInterval) {
        lock.lock()
        let staged = self.staged
        lock.unlock()
        if let error {
            end(.failure(ClientError.network(url: url, reason: networkFailureReason(error, url: url, idleTimeout: idleTimeout))), stop: nil)
        } else if let staged {
            end(.success(staged), stop: nil)
        } else {
            end(.failure(ClientError.network(url: url, reason: "the download ended without a file")), stop: nil)
        }
    }

    /// Ends the transfer with `error` and stops its task (keeping its resume data when asked).
    func fail(_ error: Error, keepResumeData: Bool) {
        end(.failure(error), stop: keepResumeData)
    }

    /// Records the end unless there is one; a failure deletes the unproven file and, when
    /// `stop` is given, stops the task.
    private func end(_ outcome: Result<URL, Error>, stop: Bool?) {
        lock.lock()
        guard result == nil else { return lock.unlock() }
        result = outcome
        let continuation = self.continuation, stopTask = self.stopTask, staged = self.staged
        self.continuation = nil
        lock.unlock()
        if case .failure = outcome {
            if let staged { try? FileManager.default.removeItem(at: staged) }  // as in `delivered`
            if let stop { stopTask?(stop) }
        }
        continuation?.resume(with: outcome)
    }
}
