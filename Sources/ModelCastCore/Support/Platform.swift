#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The operating-system calls Core makes by name, in one place: Linux's Glibc and
/// Darwin spell a few of them (and `stat`'s time fields) differently, and a Swift
/// method named like one (`FileDescriptor.read`, `close`) would otherwise shadow it.
enum Platform {
    static func close(_ fd: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.close(fd)
        #else
        Darwin.close(fd)
        #endif
    }

    static func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.read(fd, buffer, count)
        #else
        Darwin.read(fd, buffer, count)
        #endif
    }

    static func write(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.write(fd, bytes, count)
        #else
        Darwin.write(fd, bytes, count)
        #endif
    }

    /// Installs `handler` for signal `number` (a C function: it may only make
    /// async-signal-safe calls). `signal` is spelled alike on both systems.
    static func setSignalHandler(_ number: Int32, _ handler: @convention(c) (Int32) -> Void) {
        _ = signal(number, handler)
    }

    /// Restores the default action for signal `number`.
    static func resetSignal(_ number: Int32) {
        _ = signal(number, SIG_DFL)
    }

    /// A file's modification time: seconds and nanoseconds.
    static func modificationTime(_ info: stat) -> (seconds: Int, nanoseconds: Int) {
        #if canImport(Glibc)
        parts(info.st_mtim)
        #else
        parts(info.st_mtimespec)
        #endif
    }

    /// A file's status-change time: seconds and nanoseconds.
    static func changeTime(_ info: stat) -> (seconds: Int, nanoseconds: Int) {
        #if canImport(Glibc)
        parts(info.st_ctim)
        #else
        parts(info.st_ctimespec)
        #endif
    }

    private static func parts(_ time: timespec) -> (seconds: Int, nanoseconds: Int) {
        (Int(time.tv_sec), Int(time.tv_nsec))
    }
}
