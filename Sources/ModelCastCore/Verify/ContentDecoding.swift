import Foundation

/// Undoes an HTTP Content-Encoding the way a device's HTTP stack would: gzip (and its alias
/// x-gzip) and deflate (the zlib format, RFC 9110 §8.4.1.2), inflated by zlib (`Inflater`),
/// which checks the checksum each format carries. Anything else (br, compress, zstd,
/// stacked encodings) is refused by name: verify never asks for it (`acceptEncoding`).
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
            // One member only: a second is refused (devices' zlib stops after the first).
            return Data(try Inflater.inflate([UInt8](data), framing: .gzip, limit: limit, failure: failure))
        case "deflate":
            // zlib: CMF (method 8, window ≤ 32 KiB), FLG (no preset dictionary, header a
            // multiple of 31), raw deflate data, Adler-32 of the decoded bytes.
            let bytes = [UInt8](data)
            guard bytes.count >= 6, bytes[0] & 0x0f == 8, bytes[0] >> 4 <= 7, (UInt16(bytes[0]) << 8 | UInt16(bytes[1])) % 31 == 0 else {
                throw failure("the body is not a zlib stream (RFC 1950), which HTTP's deflate is")
            }
            guard bytes[1] & 0x20 == 0 else { throw failure("the zlib stream needs a preset dictionary") }
            return Data(try Inflater.inflate(bytes, framing: .zlib, limit: limit, failure: failure))
        default:
            throw failure("verify decodes only \(acceptEncoding) (and asks for nothing else); devices' HTTP stacks may decode it, verify cannot check it")
        }
    }
}
