import Foundation

/// Random access to an archive's bytes: a local file, or an HTTP resource read with Range requests.
package protocol RandomAccessBytes: Sendable {
    /// Total size in bytes.
    var size: Int64 { get }
    /// A display name for errors (a path or URL).
    var name: String { get }
    /// Exactly `count` bytes at `offset` (fewer only at end of data).
    func read(offset: Int64, count: Int) async throws -> [UInt8]
}

/// A local file as `RandomAccessBytes`. The file is opened once and read with
/// `pread`, so every read sees the same file even if the path is replaced meanwhile.
package struct FileBytes: RandomAccessBytes, @unchecked Sendable {
    // @unchecked: FileDescriptor is a class, but FileBytes only ever calls its
    // positional read (pread shares no file position between threads) and never closes it.
    private let file: FileDescriptor
    /// Size of the file when it was opened.
    package let size: Int64
    /// The path, as given.
    package let name: String

    /// Opens the regular file at `path` (a symbolic link is followed).
    package init(path: String) throws {
        let file = try FileDescriptor.openForReading(path)
        let info = try file.status()
        switch FileType(mode: info.st_mode) {
        case .regular, .symlink:  // open() followed any link, so fstat never reports one
            break
        case .directory:
            throw ModelCastError.invalidModel(path: path, format: "zip", reason: "a directory, not a zip archive")
        case .other(let kind):
            throw ModelCastError.specialFile(path: path, kind: kind)
        }
        self.file = file
        self.size = Int64(info.st_size)
        self.name = path
    }

    /// `count` bytes at `offset`, fewer only at end of file.
    package func read(offset: Int64, count: Int) async throws -> [UInt8] {
        guard offset >= 0, count >= 0 else {
            throw ModelCastError.io(operation: "read \(count) bytes at offset \(offset)", path: name, reason: "invalid range")
        }
        return try file.read(at: offset, count: count)
    }
}
