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

    /// Installs `handler` for `signal` (a C function: it may only make async-signal-safe calls).
    static func setSignalHandler(_ signal: Int32, _ handler: @convention(c) (Int32) -> Void) {
        #if canImport(Glibc)
        _ = Glibc.signal(signal, handler)
        #else
        _ = Darwin.signal(signal, handler)
        #endif
    }

    /// Restores the default action for `signal`.
    static func resetSignal(_ signal: Int32) {
        #if canImport(Glibc)
        _ = Glibc.signal(signal, SIG_DFL)
        #else
        _ = Darwin.signal(signal, SIG_DFL)
        #endif
    }

    /// A file's status-change time: seconds and nanoseconds.
    static func changeTime(_ info: stat) -> (seconds: Int, nanoseconds: Int) {
        #if canImport(Glibc)
        (Int(info.st_ctim.tv_sec), Int(info.st_ctim.tv_nsec))
        #else
        (Int(info.st_ctimespec.tv_sec), Int(info.st_ctimespec.tv_nsec))
        #endif
    }

    /// A file's modification time: seconds and nanoseconds.
    static func modificationTime(_ info: stat) -> (seconds: Int, nanoseconds: Int) {
        #if canImport(Glibc)
        (Int(info.st_mtim.tv_sec), Int(info.st_mtim.tv_nsec))
        #else
        (Int(info.st_mtimespec.tv_sec), Int(info.st_mtimespec.tv_nsec))
        #endif
    }
}
