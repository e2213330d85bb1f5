import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The modification time of a file that replaces another under a name a web server serves
/// (manifest.json, its signature, a channel's manifest, the release page). nginx's ETag
/// and Last-Modified are made of whole seconds and the size: a new manifest of the same
/// size written within the second of the old one would carry the old one's validators,
/// and a device asking with `If-None-Match` would be told 304, kept on the old release
/// until the next publish (a rollback seconds after a bad publish, a script publishing
/// twice). So the new file's time is moved into a later second than the old one's when
/// the clock has not moved there yet: at most a second ahead of it.
enum ServedFileTime {
    /// Call after the last write to `descriptor` (a write sets the time again), before the
    /// rename over `destination`. Nothing to do when there is no file at `destination`.
    static func stamp(_ descriptor: FileDescriptor, replacing destination: String) throws {
        var old = stat()
        guard lstat(destination, &old) == 0 else { return }
        let previous = Platform.modificationTime(old).seconds
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        guard now.tv_sec <= previous else { return }
        // Access time too (UTIME_OMIT is a macro Swift does not import); nothing reads it.
        var times = [timespec(tv_sec: previous + 1, tv_nsec: 0), timespec(tv_sec: previous + 1, tv_nsec: 0)]
        guard futimens(descriptor.fd, &times) == 0 else {
            throw ModelCastError.io(operation: "set the modification time of", path: destination, reason: errnoDescription())
        }
    }
}
