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
            // The zlib format (RFC 1950); zlib checks its header (method, window, no preset
            // dictionary) and its Adler-32.
            return Data(try Inflater.inflate([UInt8](data), framing: .zlib, limit: limit, failure: failure))
        default:
            throw failure("verify decodes only \(acceptEncoding) (and asks for nothing else); devices' HTTP stacks may decode it, verify cannot check it")
        }
    }
}
