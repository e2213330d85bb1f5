import Foundation
import ModelCastFormat
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A file read and written at explicit offsets (`pread`/`pwrite`), so several range
/// requests can each write their segments where they belong without sharing a file
/// position.
// @unchecked: only a descriptor, never reassigned; pwrite/pread share no file position,
// and it is closed once, in deinit, when no request holds it any more.
final class PositionalFile: @unchecked Sendable {
    let path: String
    private let descriptor: Int32

    /// Opens `url` for reading and writing, creating it when missing.
    init(url: URL) throws {
        path = url.path
        descriptor = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw ClientError.io(path: url.path, reason: "cannot open for writing: \(Self.errorText())") }
    }

    /// Opens `url` for reading only.
    init(readingFrom url: URL) throws {
        path = url.path
        descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw ClientError.io(path: url.path, reason: "cannot open for reading: \(Self.errorText())") }
    }

    deinit { close(descriptor) }

    /// The file's size now.
    func size() throws -> Int64 {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw ClientError.io(path: path, reason: "cannot read its size: \(Self.errorText())") }
        return Int64(info.st_size)
    }

    /// Cuts or extends the file to `size` bytes (an extension reads as zeros).
    func truncate(to size: Int64) throws {
        guard ftruncate(descriptor, off_t(size)) == 0 else { throw ClientError.io(path: path, reason: "cannot set its size: \(Self.errorText())") }
    }

    /// Writes all of `data` at `offset`.
    func write(_ data: Data, at offset: Int64) throws {
        try data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            var done = 0
            while done < buffer.count {
                let written = pwrite(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset + Int64(done)))
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { throw ClientError.io(path: path, reason: "write failed: \(Self.errorText())") }
                done += written
            }
        }
    }

    /// Reads `count` bytes at `offset`; fewer only at the file's end.
    func read(count: Int, at offset: Int64) throws -> Data {
        var data = Data(count: count)
        let got = try data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) -> Int in
            var done = 0
            while done < count {
                let read = pread(descriptor, buffer.baseAddress! + done, count - done, off_t(offset + Int64(done)))
                if read < 0 && errno == EINTR { continue }
                guard read >= 0 else { throw ClientError.io(path: path, reason: "read failed: \(Self.errorText())") }
                if read == 0 { break }
                done += read
            }
            return done
        }
        if got < count { data.removeSubrange(got..<count) }
        return data
    }

    private static func errorText() -> String { String(cString: strerror(errno)) }
}
