import Foundation
internal import CLibZ

/// Writes a deterministic zip, handing every archive byte to `sink` as it is produced (so
/// it can be hashed and written in the same pass). Entries go in the caller's (sorted)
/// order; every entry has the same time, owner and modes, and its name as given (UTF-8).
/// The record layout is `ZipRecords`'; deflated data is `Deflater`'s; the CRC-32 is zlib's.
///
/// Memory: the central directory (about 100 bytes an entry) until `finish`; file data only
/// passes through (stored) or through a 64 KiB deflate buffer.
final class ZipWriter {
    private let compression: ZipCompression
    private let displayPath: String
    private let sink: (UnsafeRawBufferPointer) throws -> Void
    /// Bytes handed to `sink` so far: where the next record starts.
    private var offset: Int64 = 0
    private var centralDirectory: [UInt8] = []
    private var entryCount = 0

    init(compression: ZipCompression, displayPath: String, sink: @escaping (UnsafeRawBufferPointer) throws -> Void) throws {
        self.compression = compression
        self.displayPath = displayPath
        self.sink = sink
    }

    /// Adds a directory entry (mode 0755). `name` must end in `/`.
    func addDirectory(name: String) throws {
        let entry = ZipRecords.Entry.directory(name: name, offset: offset)
        try checkName(entry)
        try write(ZipRecords.localHeader(entry))
        centralDirectory += ZipRecords.centralHeader(entry, crc: 0, compressed: 0, uncompressed: 0)
        entryCount += 1
    }

    /// Adds a regular file of `size` bytes, streaming its data from `read` (into `buffer`)
    /// until it returns 0. Returns how many bytes `read` gave: when that is not `size` the
    /// entry is left unfinished (the caller reports the file as changed and drops the zip);
    /// reading stops at the first byte past `size`.
    func addFile(
        name: String, size: Int64, executable: Bool,
        read: (UnsafeMutableRawBufferPointer) throws -> Int,
        buffer: UnsafeMutableRawBufferPointer
    ) throws -> Int64 {
        let entry = ZipRecords.Entry.file(name: name, size: size, executable: executable, compression: compression, offset: offset)
        try checkName(entry)
        try write(ZipRecords.localHeader(entry))
        let deflater: Deflater? = compression == .deflate ? try Deflater(displayPath: displayPath) : nil
        var crc: uLong = 0
        var written: Int64 = 0
        var compressed: Int64 = 0
        while true {
            let n = try read(buffer)
            if n == 0 { break }
            written += Int64(n)
            guard written <= size else { return written }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
            crc = crc32(crc, chunk.baseAddress!.assumingMemoryBound(to: Bytef.self), uInt(n))
            if let deflater {
                compressed += try deflater.compress(chunk, emit: write)
            } else {
                try write(chunk)
                compressed += Int64(n)
            }
        }
        guard written == size else { return written }
        if let deflater { compressed += try deflater.finish(emit: write) }
        try finishEntry(entry, crc: UInt32(truncatingIfNeeded: crc), compressed: compressed, uncompressed: written)
        return written
    }

    /// Adds a stored file's records without reading it, for laying a zip out before it is
    /// written (`ZipLayoutImage`): its local header, then `skip` told how many data bytes
    /// follow (`size`), then its data descriptor and central header with a CRC-32 of 0 (the
    /// only bytes that differ from what `addFile` writes for a file of that size).
    func skipFile(name: String, size: Int64, executable: Bool, skip: (Int64) throws -> Void) throws {
        precondition(compression == .store, "a deflated entry's size is known only once its data is written")
        let entry = ZipRecords.Entry.file(name: name, size: size, executable: executable, compression: compression, offset: offset)
        try checkName(entry)
        try write(ZipRecords.localHeader(entry))
        try skip(size)
        offset += size
        try finishEntry(entry, crc: 0, compressed: size, uncompressed: size)
    }

    /// The data descriptor after a file's data, and its central header for `finish`.
    private func finishEntry(_ entry: ZipRecords.Entry, crc: UInt32, compressed: Int64, uncompressed: Int64) throws {
        try write(ZipRecords.dataDescriptor(entry, crc: crc, compressed: compressed, uncompressed: uncompressed))
        centralDirectory += ZipRecords.centralHeader(entry, crc: crc, compressed: compressed, uncompressed: uncompressed)
        entryCount += 1
    }

    /// Writes the central directory and the end records.
    func finish() throws {
        let directoryOffset = offset
        try write(centralDirectory)
        try write(ZipRecords.endRecords(entries: entryCount, directoryOffset: directoryOffset, directorySize: offset - directoryOffset))
        centralDirectory = []
    }

    /// A zip name field holds at most 65,535 bytes (a path on disk is far shorter: PATH_MAX).
    private func checkName(_ entry: ZipRecords.Entry) throws {
        guard entry.name.count <= 0xFFFF else {
            let name = String(decoding: entry.name, as: UTF8.self)
            throw ModelCastError.archive(path: displayPath, message: "entry \(quotedValue(name)): a name of \(entry.name.count) bytes is longer than a zip can hold (65,535)")
        }
    }

    private func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    private func write(_ bytes: UnsafeRawBufferPointer) throws {
        try sink(bytes)
        offset += Int64(bytes.count)
    }
}
