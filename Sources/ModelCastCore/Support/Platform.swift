#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The operating-system calls Core makes by name, in one place: Linux's Glibc and
/// Darwin spell a few of them (and `stat`'s time fields) differently, and a Swift
/// method named like one (`FileDescriptor.read`, `close`) would otherwise shadow it.
package enum Platform {
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

    package static func write(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
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

    /// Tells the system `fd` will be read from start to end once, so it reads ahead
    /// generously. Advice only: a system that cannot take it reads as usual.
    static func adviseSequential(_ fd: Int32) {
        #if canImport(Glibc)
        _ = posix_fadvise(fd, 0, 0, Int32(POSIX_FADV_SEQUENTIAL))
        #else
        _ = fcntl(fd, F_RDAHEAD, 1)
        #endif
    }

    /// The path of the file an open descriptor refers to, links resolved (nil if the
    /// system cannot say).
    static func openedPath(_ fd: Int32) -> String? {
        #if canImport(Glibc)
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/fd/\(fd)", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        #else
        var buffer = [CChar](repeating: 0, count: Int(MAXPATHLEN))
        guard fcntl(fd, F_GETPATH, &buffer) != -1 else { return nil }
        return String(cString: buffer)
        #endif
    }

    /// The width in columns of the terminal on `fd`, or nil when it is not one (or says 0).
    package static func terminalColumns(_ fd: Int32) -> Int? {
        var size = winsize()
        #if canImport(Glibc)
        let request = UInt(TIOCGWINSZ)
        #else
        let request: UInt = 0x4008_7468  // TIOCGWINSZ: _IOR('t', 104, struct winsize), a macro Swift cannot import
        #endif
        guard ioctl(fd, request, &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    private static func parts(_ time: timespec) -> (seconds: Int, nanoseconds: Int) {
        (Int(time.tv_sec), Int(time.tv_nsec))
    }
}
