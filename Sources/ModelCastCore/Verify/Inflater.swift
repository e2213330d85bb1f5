import Foundation
internal import CLibZ

/// Inflates a whole deflate stream in memory through zlib, as the devices' HTTP stacks and
/// unzippers do: raw (a zip entry), zlib-framed (HTTP's `deflate`, RFC 1950) or gzip-framed
/// (RFC 1952). zlib checks the framing's checksum itself (Adler-32, or CRC-32 and length).
enum Inflater {
    enum Framing {
        case raw, zlib, gzip

        var windowBits: Int32 {
            switch self {
            case .raw: -MAX_WBITS
            case .zlib: MAX_WBITS
            case .gzip: MAX_WBITS + 16
            }
        }

        /// What zlib's "incorrect data check" means for this framing.
        var checksum: String {
            switch self {
            case .raw: "checksum"
            case .zlib: "Adler-32"
            case .gzip: "CRC-32"
            }
        }
    }

    /// The inflated bytes of `input`, at most `limit` of them. Bytes after the end of the
    /// stream are refused unless `trailing` allows them (a zip entry's compressed size is
    /// the archive's word, not the stream's). `failure` turns a reason into the caller's error.
    static func inflate(_ input: [UInt8], framing: Framing, limit: Int, allowTrailing: Bool = false,
                        failure: (String) -> ModelCastError) throws -> [UInt8] {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer {
            inflateEnd(stream)
            stream.deinitialize(count: 1)
            stream.deallocate()
        }
        guard modelcast_inflate_init(stream, framing.windowBits) == Z_OK else {
            throw failure("zlib inflateInit2 failed")
        }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        return try input.withUnsafeBufferPointer { source -> [UInt8] in
            stream.pointee.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
            stream.pointee.avail_in = uInt(source.count)
            while true {
                let (status, produced) = chunk.withUnsafeMutableBufferPointer { buffer -> (Int32, Int) in
                    stream.pointee.next_out = buffer.baseAddress
                    stream.pointee.avail_out = uInt(buffer.count)
                    let status = zlibInflate(stream)
                    return (status, buffer.count - Int(stream.pointee.avail_out))
                }
                output += chunk[0..<produced]
                guard output.count <= limit else { throw failure("the decoded body is larger than \(limit) bytes") }
                switch status {
                case Z_STREAM_END:
                    let rest = Int(stream.pointee.avail_in)
                    if rest > 0 && !allowTrailing {
                        throw failure("\(rest) bytes follow the end of the \(framing) stream (corrupt, or several gzip members)")
                    }
                    return output
                case Z_OK:
                    continue
                case Z_BUF_ERROR where stream.pointee.avail_in == 0:
                    throw failure("the \(framing) stream ends early, after \(source.count) bytes (\(output.count) decoded)")
                case Z_NEED_DICT:
                    throw failure("the zlib stream needs a preset dictionary")
                default:
                    let message = stream.pointee.msg.map { String(cString: $0) } ?? "zlib status \(status)"
                    throw failure(describe(message, framing))
                }
            }
        }
    }

    private static func describe(_ message: String, _ framing: Framing) -> String {
        switch message {
        case "incorrect data check": "its \(framing.checksum) does not match the decoded bytes (corrupt)"
        case "incorrect length check": "its length field does not match the decoded bytes (corrupt)"
        case "incorrect header check", "unknown compression method":
            framing == .gzip ? "the body is not gzip data" : "the body is not a zlib stream (RFC 1950), which HTTP's deflate is"
        case "invalid window size": "its zlib header asks for a window over 32 KiB, which RFC 1950 does not allow"
        default: "corrupt \(framing) data: \(message)"
        }
    }
}

/// zlib's `inflate`, by a name no Swift declaration shadows.
private func zlibInflate(_ stream: UnsafeMutablePointer<z_stream>) -> Int32 {
    inflate(stream, Z_NO_FLUSH)
}
