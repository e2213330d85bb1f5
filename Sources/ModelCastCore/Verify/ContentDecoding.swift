import Foundation
internal import CLibArchive

/// Undoes an HTTP Content-Encoding the way a device's HTTP stack would: gzip (and
/// its alias x-gzip) and deflate (the zlib format, RFC 9110 §8.4.1.2), inflated by
/// libarchive's gzip filter, with the checksums the formats carry checked here.
/// Anything else (br, compress, zstd, stacked encodings) is refused by name: verify
/// never asks for it (`acceptEncoding`).
enum ContentDecoding {
    /// The Accept-Encoding verify sends: exactly the encodings `decode` undoes, so a
    /// server never answers with one that could not be checked. (URLSession also
    /// offers br; a body a CDN brotli-encodes for devices is not seen by verify.)
    static let acceptEncoding = "gzip, deflate"

    /// The decoded body of `url`; throws, naming the encoding and the URL, for an
    /// encoding it cannot decode, for corrupt data and for a body larger than `limit`.
    static func decode(_ data: Data, encoding: String, url: String, limit: Int) throws -> Data {
        func failure(_ reason: String) -> ModelCastError {
            .undecodableBody(url: url, encoding: encoding, reason: reason)
        }
        switch encoding.lowercased().trimmingCharacters(in: .whitespaces) {
        case "gzip", "x-gzip":
            let bytes = [UInt8](data)
            let output = try inflateGzip(bytes, limit: limit, failure: failure)
            // libarchive does not check the gzip trailer; devices' zlib does.
            guard bytes.count >= 18 else { throw failure("a gzip stream is at least 18 bytes, this one is \(bytes.count)") }
            let crc = littleEndian32(bytes[(bytes.count - 8)...])
            let size = littleEndian32(bytes[(bytes.count - 4)...])
            guard crc == crc32(output), size == UInt32(truncatingIfNeeded: output.count) else {
                throw failure("the gzip trailer (CRC-32 \(hex32(crc)), \(size) bytes) does not match the decoded \(output.count) bytes (CRC-32 \(hex32(crc32(output)))): corrupt, or several gzip members")
            }
            return Data(output)
        case "deflate":
            // zlib: CMF (method 8, window ≤ 32 KiB), FLG (no preset dictionary, header
            // a multiple of 31), raw deflate data, Adler-32 of the decoded bytes.
            let bytes = [UInt8](data)
            guard bytes.count >= 6, bytes[0] & 0x0f == 8, bytes[0] >> 4 <= 7, (UInt16(bytes[0]) << 8 | UInt16(bytes[1])) % 31 == 0 else {
                throw failure("the body is not a zlib stream (RFC 1950), which HTTP's deflate is")
            }
            guard bytes[1] & 0x20 == 0 else { throw failure("the zlib stream needs a preset dictionary") }
            // The raw deflate data framed as a one-member gzip stream for libarchive, whose
            // gzip filter does not check the (here zeroed) trailer; the Adler-32 is checked below.
            let gzip: [UInt8] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff] + bytes[2..<(bytes.count - 4)] + [UInt8](repeating: 0, count: 8)
            let output = try inflateGzip(gzip, limit: limit, failure: failure)
            let expected = UInt32(bytes[bytes.count - 4]) << 24 | UInt32(bytes[bytes.count - 3]) << 16 | UInt32(bytes[bytes.count - 2]) << 8 | UInt32(bytes[bytes.count - 1])
            guard adler32(output) == expected else {
                throw failure("the zlib Adler-32 \(hex32(expected)) does not match the decoded \(output.count) bytes (\(hex32(adler32(output))))")
            }
            return Data(output)
        default:
            throw failure("verify decodes only \(acceptEncoding) (and asks for nothing else); devices' HTTP stacks may decode it, verify cannot check it")
        }
    }

    /// Inflates a gzip stream through libarchive (raw format, gzip filter).
    static func inflateGzip(_ bytes: [UInt8], limit: Int, failure: (String) -> ModelCastError) throws -> [UInt8] {
        guard let archive = archive_read_new() else { throw failure("archive_read_new failed") }
        defer { archive_read_free(archive) }
        archive_read_support_filter_gzip(archive)
        archive_read_support_format_raw(archive)
        func message() -> String { archive_error_string(archive).map { String(cString: $0) } ?? "unknown error" }
        var output: [UInt8] = []
        try bytes.withUnsafeBytes { raw in
            guard archive_read_open_memory(archive, raw.baseAddress, raw.count) == ARCHIVE_OK else { throw failure(message()) }
            // Only the gzip filter is enabled: anything else is refused here.
            guard archive_filter_code(archive, 0) == ARCHIVE_FILTER_GZIP else { throw failure("the body is not gzip data") }
            var entry: OpaquePointer?
            guard archive_read_next_header(archive, &entry) == ARCHIVE_OK else { throw failure(message()) }
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let n = archive_read_data(archive, &buffer, buffer.count)
                if n < 0 { throw failure(message()) }
                if n == 0 { break }
                output += buffer[0..<n]
                guard output.count <= limit else { throw failure("the decoded body is larger than \(limit) bytes") }
            }
        }
        return output
    }

    private static func littleEndian32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        let b = Array(bytes.prefix(4))
        return UInt32(b[0]) | UInt32(b[1]) << 8 | UInt32(b[2]) << 16 | UInt32(b[3]) << 24
    }

    private static func hex32(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }

    private static let crcTable: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    /// CRC-32 (ISO 3309, as gzip uses it).
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for byte in bytes { c = crcTable[Int((c ^ UInt32(byte)) & 0xff)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }

    /// Adler-32 (RFC 1950, as zlib uses it).
    static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt32 = 1, b: UInt32 = 0
        for chunk in stride(from: 0, to: bytes.count, by: 5552) {
            for byte in bytes[chunk..<min(chunk + 5552, bytes.count)] {
                a += UInt32(byte)
                b += a
            }
            a %= 65521
            b %= 65521
        }
        return b << 16 | a
    }
}
