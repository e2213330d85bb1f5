import Foundation

/// The bytes a protobuf message is read from: a file read through a small window (a model
/// file can be large and only a few of its fields are wanted; the rest are skipped by their
/// length, never copied), or bytes already in memory. Offsets are checked against `size` by
/// the reader before they get here; a file that shrinks while it is read is refused.
final class ProtobufSource {
    /// The file (or bytes) the errors name.
    let path: String
    /// The format the errors name ("Core ML", "ONNX").
    let format: String
    /// Bytes available.
    let size: UInt64
    private let file: FileDescriptor?
    private var window: [UInt8]
    private var windowStart: UInt64 = 0
    static let windowSize = 64 << 10

    /// Reads the regular file at `path` (a link is followed, as the model argument may be one).
    init(path: String, format: String) throws {
        let file = try FileDescriptor.openForReading(path)
        let status = try file.status()
        guard case .regular = FileType(mode: status.st_mode) else {
            throw ModelCastError.invalidModel(path: path, format: format, reason: "not a regular file")
        }
        self.path = path
        self.format = format
        self.file = file
        self.size = UInt64(status.st_size)
        self.window = []
    }

    /// Reads bytes already in memory (tests, and a message cut out of a larger file).
    init(bytes: [UInt8], path: String, format: String) {
        self.path = path
        self.format = format
        self.file = nil
        self.size = UInt64(bytes.count)
        self.window = bytes
    }

    /// An error about this source's content.
    func fail(_ reason: String) -> ModelCastError {
        .invalidModel(path: path, format: format, reason: reason)
    }

    /// The byte at `offset`, which the caller checked is below `size`.
    func byte(at offset: UInt64) throws -> UInt8 {
        if offset < windowStart || offset - windowStart >= UInt64(window.count) {
            try fill(at: offset, count: 1)
        }
        return window[Int(offset - windowStart)]
    }

    /// `count` bytes from `offset`; the caller checked they lie below `size`.
    func bytes(at offset: UInt64, count: Int) throws -> [UInt8] {
        if offset < windowStart || offset - windowStart + UInt64(count) > UInt64(window.count) {
            try fill(at: offset, count: count)
        }
        let start = Int(offset - windowStart)
        return Array(window[start..<(start + count)])
    }

    private func fill(at offset: UInt64, count: Int) throws {
        guard let file else { throw fail("internal: read at byte \(offset) outside \(size) bytes") }
        window = try file.read(at: Int64(offset), count: max(count, Self.windowSize))
        windowStart = offset
        guard window.count >= count else {
            throw fail("the file shrank while it was read: \(count) bytes at \(offset) are gone (it had \(size))")
        }
    }
}
