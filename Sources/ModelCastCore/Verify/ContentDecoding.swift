import Foundation
internal import CLibArchive

/// Undoes an HTTP Content-Encoding (gzip, deflate as zlib, x-gzip) the way a
/// device's HTTP stack would, through libarchive's raw-format filters.
enum ContentDecoding {
    /// The decoded bytes; throws for encodings devices would not decode and for corrupt data.
    static func decode(_ data: Data, encoding: String, limit: Int) throws -> Data {
        let name = encoding.lowercased().trimmingCharacters(in: .whitespaces)
        guard ["gzip", "x-gzip", "deflate"].contains(name) else {
            throw ModelCastError.usage("cannot decode Content-Encoding '\(encoding)'")
        }
        guard let archive = archive_read_new() else { throw ModelCastError.usage("archive_read_new failed") }
        defer { archive_read_free(archive) }
        archive_read_support_filter_gzip(archive)
        archive_read_support_filter_compress(archive)
        archive_read_support_format_raw(archive)
        var output = Data()
        try data.withUnsafeBytes { raw in
            guard archive_read_open_memory(archive, raw.baseAddress, raw.count) == ARCHIVE_OK else {
                throw ModelCastError.usage("cannot decode \(encoding) body: \(String(cString: archive_error_string(archive)))")
            }
            var entry: OpaquePointer?
            guard archive_read_next_header(archive, &entry) == ARCHIVE_OK else {
                throw ModelCastError.usage("cannot decode \(encoding) body: \(archive_error_string(archive).map { String(cString: $0) } ?? "unknown error")")
            }
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let n = archive_read_data(archive, &buffer, buffer.count)
                if n < 0 { throw ModelCastError.usage("cannot decode \(encoding) body: \(archive_error_string(archive).map { String(cString: $0) } ?? "unknown error")") }
                if n == 0 { break }
                output.append(contentsOf: buffer[0..<n])
                guard output.count <= limit else { throw ModelCastError.usage("decoded body is larger than \(limit) bytes") }
            }
        }
        return output
    }
}
