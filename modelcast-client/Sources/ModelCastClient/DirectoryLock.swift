import Foundation
import ModelCastFormat
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The client directory's advisory lock: `flock` on `DIR/state.lock`, held while a call
/// reads and changes the state (an update, a request, a check, a revert), so an app and
/// its extension, or two instances of an app, running the client on one directory take
/// turns instead of downloading into the same files and switching the same links.
///
/// Each hold opens the lock file anew: `flock` locks belong to an open file, so two
/// holders in one process exclude each other as two processes do. The lock is advisory
/// and the kernel drops it when its holder dies (even by SIGKILL), so a crash never
/// leaves the directory locked; the file itself stays (removing it would race).
// @unchecked: `released` is set once, by `release()`, which the holder calls from one task;
// the descriptor and key never change.
final class DirectoryLock: @unchecked Sendable {
    /// The lock file's name in the client's directory.
    static let fileName = "state.lock"
    /// How often a waiting call tries again (`flock` has no timed wait).
    static let pollInterval: UInt64 = 50_000_000

    private let descriptor: Int32
    private let key: String
    /// Set once, by `release()` or `deinit`, from the one task that holds the value.
    private var released = false

    private init(descriptor: Int32, key: String) {
        self.descriptor = descriptor
        self.key = key
        Self.heldHere.add(key)
    }

    /// Takes the lock of `directory`, waiting for another holder at most `timeout`
    /// seconds, then `ClientError.directoryBusy`. A cancelled wait throws `CancellationError`.
    static func acquire(_ directory: URL, timeout: TimeInterval) async throws -> DirectoryLock {
        let path = directory.appendingPathComponent(fileName).path
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw ClientError.io(path: path, reason: String(cString: strerror(errno))) }
        let started = Date()
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let failure = errno
            guard failure == EWOULDBLOCK || failure == EINTR else {
                close(descriptor)
                throw ClientError.io(path: path, reason: String(cString: strerror(failure)))
            }
            guard Date().timeIntervalSince(started) < timeout else {
                close(descriptor)
                throw ClientError.directoryBusy(path: directory.path, waited: Int(timeout.rounded(.up)))
            }
            do { try await Task.sleep(nanoseconds: pollInterval) } catch {
                close(descriptor)
                throw error
            }
        }
        return DirectoryLock(descriptor: descriptor, key: Self.key(directory))
    }

    /// Lets the lock go (at once; `deinit` would do it too, whenever the value goes).
    func release() {
        guard !released else { return }
        released = true
        Self.heldHere.remove(key)
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    deinit { release() }

    /// True while a call of this process holds the lock of `directory`.
    static func isHeldInThisProcess(_ directory: URL) -> Bool {
        heldHere.contains(key(directory))
    }

    private static func key(_ directory: URL) -> String { directory.standardizedFileURL.resolvingSymlinksInPath().path }

    /// The directories whose lock a call of this process holds, with how many holders.
    private static let heldHere = HeldDirectories()
}

/// A counted set of paths behind a lock (the client supports systems older than
/// `Synchronization.Mutex`).
// @unchecked: `counts` is touched only under `lock`.
private final class HeldDirectories: @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [String: Int] = [:]

    func add(_ key: String) { lock.withLock { counts[key, default: 0] += 1 } }

    func remove(_ key: String) {
        lock.withLock {
            let count = (counts[key] ?? 1) - 1
            counts[key] = count > 0 ? count : nil
        }
    }

    func contains(_ key: String) -> Bool { lock.withLock { counts[key] != nil } }
}
