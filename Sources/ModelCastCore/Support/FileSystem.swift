import Foundation

/// An open file descriptor, closed when the value goes away.
final class FileDescriptor {
    let fd: Int32
    let path: String
    private var isClosed = false

    /// Opens `path` for reading. With `followLinks: false` a symbolic link as the
    /// last component is refused (`O_NOFOLLOW`), and the open does not block on a
    /// FIFO (`O_NONBLOCK`), for callers that then `fstat` and accept only regular files.
    static func openForReading(_ path: String, followLinks: Bool = true) throws -> FileDescriptor {
        let fd = open(path, O_RDONLY | O_CLOEXEC | (followLinks ? 0 : O_NOFOLLOW | O_NONBLOCK))
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT { throw ModelCastError.notFound(path: path) }
            if code == ELOOP, !followLinks {
                throw ModelCastError.specialFile(path: path, kind: "symbolic link to \(linkTarget(path))")
            }
            throw ModelCastError.unreadable(path: path, reason: errnoDescription(code))
        }
        return FileDescriptor(fd: fd, path: path)
    }

    init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    deinit { if !isClosed { _ = Platform.close(fd) } }

    /// Reads up to `buffer.count` bytes; 0 at end of file. Retries on EINTR.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while true {
            let n = Platform.read(fd, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            if errno == EINTR { continue }
            throw ModelCastError.unreadable(path: path, reason: errnoDescription())
        }
    }

    /// Reads up to `count` bytes at `offset` (short only at end of file).
    func read(at offset: Int64, count: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            let n = out.withUnsafeMutableBytes { raw in
                pread(fd, raw.baseAddress! + got, count - got, off_t(offset) + off_t(got))
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw ModelCastError.unreadable(path: path, reason: errnoDescription())
            }
            if n == 0 { break }
            got += n
        }
        out.removeLast(count - got)
        return out
    }

    /// Fills `buffer` from `offset` on (short only at end of file); returns the byte count.
    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var got = 0
        while got < buffer.count {
            let n = pread(fd, buffer.baseAddress! + got, buffer.count - got, off_t(offset) + off_t(got))
            if n < 0 {
                if errno == EINTR { continue }
                throw ModelCastError.unreadable(path: path, reason: errnoDescription())
            }
            if n == 0 { break }
            got += n
        }
        return got
    }

    /// Writes every byte, retrying short writes and EINTR.
    func writeAll(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let n = Platform.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw ModelCastError.io(operation: "write", path: path, reason: errnoDescription())
            }
            offset += n
        }
    }

    /// Flushes the file's data to stable storage.
    func sync() throws {
        guard fsync(fd) == 0 else {
            throw ModelCastError.io(operation: "fsync", path: path, reason: errnoDescription())
        }
    }

    /// `fstat` of the open file.
    func status() throws -> stat {
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw ModelCastError.io(operation: "stat", path: path, reason: errnoDescription())
        }
        return info
    }

    /// Closes now, reporting errors (a deferred write error can surface here).
    /// Hands the descriptor to a new owner, who closes it; this value reads through it
    /// for as long as the owner keeps it open.
    func takeDescriptor() throws -> Int32 {
        guard !isClosed else { throw ModelCastError.io(operation: "read", path: path, reason: "the file was closed") }
        isClosed = true
        return fd
    }

    func close() throws {
        guard !isClosed else { return }
        isClosed = true
        guard Platform.close(fd) == 0 else {
            throw ModelCastError.io(operation: "close", path: path, reason: errnoDescription())
        }
    }
}

/// A file written under a temporary name beside its destination and renamed into
/// place only when complete, so a reader never sees a partial file at `path`.
final class AtomicFile {
    let destination: String
    let temporaryPath: String
    let descriptor: FileDescriptor
    /// Renamed into place, handed over, or discarded: nothing left for deinit to do.
    private var done = false

    /// Creates the temporary file (mode 0644) in the destination's directory.
    init(destination: String) throws {
        self.destination = destination
        let directory = PathText.parent(destination)
        let name = PathText.lastComponent(destination)
        let random = UInt32.random(in: 0...UInt32.max)
        let temp = (directory.isEmpty ? "." : directory) + "/.\(name).modelcast-\(getpid())-\(String(random, radix: 16)).tmp"
        // Registered before it exists: a signal arriving at any point after the
        // file appears finds it in the table.
        Interrupts.shared.registerTemporary(temp)
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            let reason = errnoDescription()
            Interrupts.shared.unregisterTemporary(temp)
            throw ModelCastError.io(operation: "create", path: destination, reason: reason)
        }
        _ = fchmod(fd, 0o644)
        temporaryPath = temp
        descriptor = FileDescriptor(fd: fd, path: destination)
    }

    deinit { discard() }

    /// True for a name this type gives its temporary files: `.NAME.modelcast-PID-RANDOM.tmp`.
    static func isTemporaryName(_ name: String) -> Bool {
        guard name.hasPrefix("."), name.hasSuffix(".tmp"), let marker = name.range(of: ".modelcast-", options: .backwards) else { return false }
        let tail = name[marker.upperBound...].dropLast(4).split(separator: "-", omittingEmptySubsequences: false)
        return marker.lowerBound > name.index(after: name.startIndex) && tail.count == 2
            && !tail[0].isEmpty && tail[0].allSatisfy(\.isASCIIDigit) && !tail[1].isEmpty && tail[1].allSatisfy(\.isHexDigit)
    }

    /// Renames the finished file over the destination. With `durable`, first fsyncs
    /// the data and afterwards the directory, so the new file survives a crash
    /// (publishing needs that; a build artifact from `pack` does not, like `cp`).
    func commit(durable: Bool) throws {
        if durable { try descriptor.sync() }
        try descriptor.close()
        guard rename(temporaryPath, destination) == 0 else {
            let reason = errnoDescription()
            discard()
            throw ModelCastError.io(operation: "rename", path: destination, reason: reason)
        }
        done = true
        Interrupts.shared.unregisterTemporary(temporaryPath)
        if durable { syncDirectory(of: destination) }
    }

    /// Keeps the finished temporary file where it is and hands it to the caller,
    /// who must store or remove it (it stays registered for removal on a signal).
    func keepTemporary() throws -> String {
        try descriptor.close()
        done = true
        return temporaryPath
    }

    /// Removes the temporary file. Only the first call (or deinit after none) does anything.
    func discard() {
        guard !done else { return }
        done = true
        try? descriptor.close()  // the file is being thrown away; a close error changes nothing
        unlink(temporaryPath)
        Interrupts.shared.unregisterTemporary(temporaryPath)
    }
}

/// fsyncs the directory holding `path` so a rename survives a crash. Best effort:
/// some file systems refuse fsync on directories, and the data itself is already synced.
func syncDirectory(of path: String) {
    let directory = PathText.parent(path)
    let fd = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    if fd >= 0 {
        _ = fsync(fd)
        _ = Platform.close(fd)
    }
}

/// `lstat` of a path, or nil when it does not exist.
func linkStatus(_ path: String) throws -> stat? {
    var info = stat()
    if lstat(path, &info) == 0 { return info }
    if errno == ENOENT || errno == ENOTDIR { return nil }
    throw ModelCastError.io(operation: "stat", path: path, reason: errnoDescription())
}

/// The file type bits of a mode.
enum FileType {
    case regular, directory, symlink, other(String)

    init(mode: mode_t) {
        switch mode & S_IFMT {
        case S_IFREG: self = .regular
        case S_IFDIR: self = .directory
        case S_IFLNK: self = .symlink
        case S_IFCHR: self = .other("character device")
        case S_IFBLK: self = .other("block device")
        case S_IFIFO: self = .other("FIFO")
        case S_IFSOCK: self = .other("socket")
        default: self = .other("unknown file type")
        }
    }
}

/// The target of a symbolic link, for error messages.
func linkTarget(_ path: String) -> String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let n = readlink(path, &buffer, buffer.count - 1)
    guard n >= 0 else { return "?" }
    return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// A file as it was at one moment: which file (device and inode), its size, and
/// its modification and status-change times. A write, truncation, `touch`, `chmod`
/// or replacement by rename all give a different snapshot (within the file
/// system's timestamp resolution), so comparing two snapshots tells whether bytes
/// read earlier may differ from the bytes there now.
package struct FileSnapshot: Sendable, Equatable {
    package let device: UInt64
    package let inode: UInt64
    package let size: Int64
    package let modifiedSeconds: Int
    package let modifiedNanoseconds: Int
    package let changedSeconds: Int
    package let changedNanoseconds: Int

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        (modifiedSeconds, modifiedNanoseconds) = Platform.modificationTime(info)
        (changedSeconds, changedNanoseconds) = Platform.changeTime(info)
    }

    /// The file at `path` now (following symbolic links, as opening it does).
    package static func current(_ path: String) throws -> FileSnapshot {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let code = errno
            if code == ENOENT { throw ModelCastError.notFound(path: path) }
            throw ModelCastError.io(operation: "stat", path: path, reason: errnoDescription(code))
        }
        return FileSnapshot(info)
    }

    /// What differs between `earlier` and this snapshot, for messages ("size 100 →
    /// 120 bytes, modified 2026-09-21T12:00:00.000000000Z → 2026-09-21T12:00:05.250000000Z").
    package func changes(since earlier: FileSnapshot) -> String {
        func time(_ seconds: Int, _ nanoseconds: Int) -> String {
            var clock = time_t(seconds)
            var parts = tm()
            gmtime_r(&clock, &parts)
            var buffer = [CChar](repeating: 0, count: 32)
            let length = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S", &parts)
            let fraction = String(nanoseconds)
            return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
                + "." + String(repeating: "0", count: max(0, 9 - fraction.count)) + fraction + "Z"
        }
        var changes: [String] = []
        if device != earlier.device || inode != earlier.inode { changes.append("replaced by another file") }
        if size != earlier.size { changes.append("size \(earlier.size) → \(size) bytes") }
        if modifiedSeconds != earlier.modifiedSeconds || modifiedNanoseconds != earlier.modifiedNanoseconds {
            changes.append("modified \(time(earlier.modifiedSeconds, earlier.modifiedNanoseconds)) → \(time(modifiedSeconds, modifiedNanoseconds))")
        }
        if changes.isEmpty, changedSeconds != earlier.changedSeconds || changedNanoseconds != earlier.changedNanoseconds {
            changes.append("status changed \(time(earlier.changedSeconds, earlier.changedNanoseconds)) → \(time(changedSeconds, changedNanoseconds))")
        }
        return changes.isEmpty ? "unchanged" : changes.joined(separator: ", ")
    }
}

/// The canonical absolute path, or nil when it does not exist.
func realPath(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
}

/// `mkdir -p`.
func makeDirectories(_ path: String) throws {
    do {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    } catch {
        throw ModelCastError.io(operation: "create directory", path: path, reason: (error as NSError).localizedFailureReason ?? error.localizedDescription)
    }
}

/// Writes `data` to `path` under a temporary name and renames it into place, so a
/// reader (a browser reloading a report) never sees half a file.
package func writeFileAtomically(_ data: Data, to path: String) throws {
    let file = try AtomicFile(destination: path)
    try data.withUnsafeBytes { try file.descriptor.writeAll($0) }
    try file.commit(durable: false)
}

/// The bytes of the regular file at `path` (a manifest, a signature, a config file),
/// refusing one larger than `limit` before reading it whole. Every error names the file as
/// `shown` (default: its path): missing, a directory or device, unreadable, too large.
package func readCapped(_ path: String, limit: Int, what: String, shown: String? = nil) throws -> Data {
    let shown = shown ?? path
    let file = try FileDescriptor.openForReading(path)
    let type = FileType(mode: try file.status().st_mode)
    guard case .regular = type else {
        if case .directory = type { throw ModelCastError.usage("\(shown) is a directory, not \(what)") }
        throw ModelCastError.usage("\(shown) is not a regular file, so not \(what)")
    }
    // One byte past the limit tells a file that is too large, without reading it all.
    let bytes = try file.read(at: 0, count: limit + 1)
    guard bytes.count <= limit else {
        let mebibytes = limit % (1 << 20) == 0 ? " (\(limit >> 20) MiB)" : ""
        throw ModelCastError.usage("\(shown) is larger than \(limit) bytes\(mebibytes), the most modelcast reads of \(what); refusing to read it")
    }
    return Data(bytes)
}
