import Foundation
internal import CLibArchive

/// The zip writer modelcast used until it wrote zips itself (`ZipWriter`), kept only to
/// prove the two write the same bytes (`ZipWriterLibArchiveComparisonTests`).
///
/// Writes a deterministic zip through libarchive, handing every archive byte to
/// `sink` as it is produced (so it can be hashed and written in the same pass).
///
/// Determinism: entries are added in the caller's (sorted) order with a fixed
/// timestamp, fixed modes, uid/gid 0 and UTF-8 names. libarchive always writes a
/// `UT` (mtime only, since no other time is set) and a `ux` (uid, gid) extra field;
/// both are therefore constant. DOS times are computed in local time, so the time
/// zone is pinned to UTC while writing.
final class LibArchiveZipWriter {
    /// 1980-01-01T00:00:00Z, the earliest DOS timestamp.
    static let fixedTimestamp = 315_532_800

    private let archive: OpaquePointer
    private let output: Output
    private let displayPath: String
    private var environment: PinnedEnvironment?
    private var finished = false

    /// Receives archive bytes from libarchive's write callback.
    final class Output {
        let sink: (UnsafeRawBufferPointer) throws -> Void
        var error: Error?
        init(sink: @escaping (UnsafeRawBufferPointer) throws -> Void) { self.sink = sink }
    }

    init(compression: ZipCompression, displayPath: String, sink: @escaping (UnsafeRawBufferPointer) throws -> Void) throws {
        guard let archive = archive_write_new() else {
            throw ModelCastError.archive(path: displayPath, message: "archive_write_new failed")
        }
        self.archive = archive
        self.output = Output(sink: sink)
        self.displayPath = displayPath
        self.environment = PinnedEnvironment()
        try check(archive_write_set_format_zip(archive), "set format zip")
        try check(archive_write_set_options(archive, "zip:compression=\(compression.rawValue),zip:hdrcharset=UTF-8"), "set zip options")
        // Unblocked: every write reaches the callback directly, no padding, no extra copy.
        try check(archive_write_set_bytes_per_block(archive, 0), "set block size")
        try check(archive_write_set_bytes_in_last_block(archive, 1), "set last block size")
        let client = Unmanaged.passUnretained(output).toOpaque()
        try check(archive_write_open(archive, client, nil, zipWriteCallback, nil), "open")
    }

    deinit {
        if !finished { archive_write_fail(archive) }
        archive_write_free(archive)
        environment?.restore()
    }

    /// Adds a directory entry (mode 0755). `name` must end in `/`.
    func addDirectory(name: String) throws {
        let entry = try makeEntry(name: name, type: 0o040000, permissions: 0o755, size: 0)
        defer { archive_entry_free(entry) }
        try check(archive_write_header(archive, entry), "write header for \(name)")
    }

    /// Adds a regular file of `size` bytes, streaming its data from `read` until it returns 0.
    func addFile(
        name: String, size: Int64, executable: Bool,
        read: (UnsafeMutableRawBufferPointer) throws -> Int,
        buffer: UnsafeMutableRawBufferPointer
    ) throws -> Int64 {
        let entry = try makeEntry(name: name, type: 0o100000, permissions: executable ? 0o755 : 0o644, size: size)
        defer { archive_entry_free(entry) }
        try check(archive_write_header(archive, entry), "write header for \(name)")
        var written: Int64 = 0
        while true {
            let n = try read(buffer)
            if n == 0 { break }
            written += Int64(n)
            // Never write more than the header announced: libarchive would silently truncate.
            guard written <= size else { return written }
            let result = archive_write_data(archive, buffer.baseAddress, n)
            if result < 0 { try throwArchiveError("write data for \(name)") }
        }
        guard written == size else { return written }
        try check(archive_write_finish_entry(archive), "finish entry \(name)")
        return written
    }

    /// Writes the central directory and closes the archive.
    func finish() throws {
        try check(archive_write_close(archive), "close")
        finished = true
        environment?.restore()
        environment = nil
    }

    private func makeEntry(name: String, type: UInt32, permissions: UInt32, size: Int64) throws -> OpaquePointer {
        guard let entry = archive_entry_new() else {
            throw ModelCastError.archive(path: displayPath, message: "archive_entry_new failed")
        }
        archive_entry_set_pathname_utf8(entry, name)
        archive_entry_set_filetype(entry, type)
        archive_entry_set_perm(entry, mode_t(permissions))
        archive_entry_set_size(entry, la_int64_t(size))
        archive_entry_set_mtime(entry, time_t(Self.fixedTimestamp), 0)
        archive_entry_set_uid(entry, 0)
        archive_entry_set_gid(entry, 0)
        return entry
    }

    private func check(_ status: Int32, _ what: String) throws {
        if status != ARCHIVE_OK { try throwArchiveError(what) }
    }

    private func throwArchiveError(_ what: String) throws -> Never {
        if let error = output.error { throw error }
        let message = archive_error_string(archive).map { String(cString: $0) } ?? "unknown error"
        throw ModelCastError.archive(path: displayPath, message: "\(what): \(message)")
    }
}

private func zipWriteCallback(
    _ archive: OpaquePointer?, _ client: UnsafeMutableRawPointer?,
    _ buffer: UnsafeRawPointer?, _ length: Int
) -> la_ssize_t {
    let output = Unmanaged<LibArchiveZipWriter.Output>.fromOpaque(client!).takeUnretainedValue()
    do {
        try output.sink(UnsafeRawBufferPointer(start: buffer, count: length))
        return la_ssize_t(length)
    } catch {
        output.error = error
        return -1
    }
}

/// Pins TZ=UTC (libarchive's DOS times use local time) and a UTF-8 character type
/// (so UTF-8 names pass through libarchive unchanged) for the life of the value,
/// then restores what the process had.
private final class PinnedEnvironment {
    private let savedTZ: String?
    private let savedLocale: String?
    private var restored = false

    init() {
        savedTZ = getenv("TZ").map { String(cString: $0) }
        setenv("TZ", "UTC0", 1)
        tzset()
        savedLocale = setlocale(LC_CTYPE, nil).map { String(cString: $0) }
        if setlocale(LC_CTYPE, "C.UTF-8") == nil { _ = setlocale(LC_CTYPE, "C.utf8") }
    }

    func restore() {
        guard !restored else { return }
        restored = true
        if let savedTZ { setenv("TZ", savedTZ, 1) } else { unsetenv("TZ") }
        tzset()
        if let savedLocale { setlocale(LC_CTYPE, savedLocale) }
    }
}
