import Foundation

/// A read-modify-write of one of the client's small record files (`licences.json`,
/// `last-use.json`) held under `flock` on `FILE.lock`, so two processes sharing the
/// directory (an app and its extension) that record at once both keep their entry: each
/// reads the other's write before it adds its own. The hold lasts one small file's read
/// and rename, so it waits without a timeout (unlike `DirectoryLock`, held for a whole
/// update). Without a lock file (a read-only volume) the write goes ahead unlocked: the
/// write itself then says what failed.
enum RecordFileLock {
    static func updating<T>(_ record: URL, _ body: () throws -> T) rethrows -> T {
        let descriptor = open(record.path + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return try body() }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 && errno == EINTR {}
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }
}
