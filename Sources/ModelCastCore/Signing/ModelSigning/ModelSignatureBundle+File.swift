import Foundation

extension ModelSignatureBundle {
    /// Writes the bundle file (mode 0644), complete or not at all. Refuses to replace an
    /// existing file unless `force`: a signature path mistyped as a model file must not
    /// destroy it.
    package func write(to path: String, force: Bool) throws {
        var info = stat()
        if !force, lstat(path, &info) == 0 {
            throw ModelCastError.usage("\(path) already exists; refusing to overwrite it with a model signature (pass --force to replace it)")
        }
        let file = try AtomicFile(destination: path)
        try json.withUnsafeBytes { try file.descriptor.writeAll($0) }
        try file.commit(durable: true)
    }

    /// Reads a bundle file, refusing one larger than `maximumSize` before reading it into
    /// memory.
    package static func readFile(_ path: String) throws -> Data {
        let file = try FileDescriptor.openForReading(path)
        let info = try file.status()
        guard case .regular = FileType(mode: info.st_mode) else {
            throw ModelCastError.unreadable(path: path, reason: "not a regular file, so not a model signature")
        }
        guard Int64(info.st_size) <= Int64(maximumSize) else {
            throw FormatError.invalidModelSignature(source: path, reason: "\(info.st_size) bytes is larger than \(maximumSize), so not a model signature")
        }
        // One byte more than the size said, to notice a file that grew meanwhile.
        let bytes = try file.read(at: 0, count: Int(info.st_size) + 1)
        guard bytes.count <= maximumSize else {
            throw FormatError.invalidModelSignature(source: path, reason: "larger than \(maximumSize) bytes, so not a model signature")
        }
        return Data(bytes)
    }
}
