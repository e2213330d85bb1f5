import Foundation
internal import CLibCrypto

/// A SHA-256 digest: 32 raw bytes that print as lowercase hex (manifests) or
/// base64 (S3's `x-amz-checksum-sha256`).
package struct SHA256Digest: Hashable, Sendable, CustomStringConvertible, Codable {
    /// The 32 raw digest bytes.
    package let bytes: [UInt8]

    /// Wraps 32 raw bytes; returns nil for any other length.
    package init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        self.bytes = bytes
    }

    /// Parses 64 hex digits (either case); returns nil for anything else.
    package init?(hex: String) {
        let utf8 = Array(hex.utf8)
        guard utf8.count == 64 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(32)
        var index = 0
        while index < 64 {
            guard let high = hexValue(utf8[index]), let low = hexValue(utf8[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        self.bytes = out
    }

    /// Lowercase hex, 64 characters.
    package var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(64)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Standard base64 with padding, 44 characters.
    package var base64: String { Data(bytes).base64EncodedString() }

    package var description: String { hex }

    package init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let digest = SHA256Digest(hex: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a SHA-256 hex digest: \(text)")
        }
        self = digest
    }

    package func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }
}

private func hexValue(_ c: UInt8) -> UInt8? {
    switch c {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
    default: return nil
    }
}

/// Streaming SHA-256 over libcrypto's EVP interface (which uses the CPU's SHA
/// extensions where present). One instance owns one `EVP_MD_CTX`.
package final class SHA256Hasher {
    private let digest: EVPDigest

    /// Starts a new digest.
    package init() throws {
        digest = try EVPDigest(EVP_sha256(), name: "SHA-256", size: 32)
    }

    /// Feeds bytes into the digest.
    package func update(_ bytes: UnsafeRawBufferPointer) { digest.update(bytes) }

    /// Feeds the bytes of a collection into the digest.
    package func update<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 { digest.update(bytes) }

    /// Finishes the digest; the hasher cannot be used afterwards.
    package func finalize() -> SHA256Digest { SHA256Digest(bytes: digest.finalize())! }

    /// The digest of a byte string in one call.
    package static func digest<Bytes: Collection>(_ bytes: Bytes) throws -> SHA256Digest where Bytes.Element == UInt8 {
        let hasher = try SHA256Hasher()
        hasher.update(bytes)
        return hasher.finalize()
    }
}

/// The newest libcrypto error on this thread's queue, as text; clears the queue.
func lastOpenSSLError() -> String {
    let code = ERR_get_error()
    guard code != 0 else { return "unknown libcrypto error" }
    var buffer = [CChar](repeating: 0, count: 256)
    ERR_error_string_n(code, &buffer, buffer.count)
    ERR_clear_error()
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
