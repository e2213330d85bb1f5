import Foundation

/// A minisign Ed25519 public key: a key id and 32 key bytes.
///
/// The file form is two lines:
///
///     untrusted comment: minisign public key D278303F259DBD05
///     RWQFvZ0lPzB40jjUo6G6KfP3q+inOF1K/XwPIec7tb086rCJBbTSbVe8
///
/// where the second line is base64 of "Ed" ‖ key id (8) ‖ public key (32), and is
/// also the bare string `minisign -P` takes.
public struct MinisignPublicKey: Hashable, Sendable, CustomStringConvertible {
    /// The key id signatures name this key by.
    public let keyID: MinisignKeyID
    /// The 32-byte Ed25519 public key.
    public let key: [UInt8]

    /// The signature algorithm bytes every minisign key starts with.
    public static let algorithm: [UInt8] = Array("Ed".utf8)

    /// Wraps a key id and 32 key bytes; throws for any other key length.
    public init(keyID: MinisignKeyID, key: [UInt8]) throws {
        guard key.count == 32 else {
            throw FormatError.signingKey(source: "key id \(keyID)", reason: "an Ed25519 public key is 32 bytes, not \(key.count)")
        }
        if let weakness = Self.weakness(of: key) {
            throw FormatError.signingKey(source: "key id \(keyID)", reason: weakness)
        }
        self.keyID = keyID
        self.key = key
    }

    /// Why `key` (32 bytes) is no key to trust, or nil: a point of small order, or an encoding
    /// that is not canonical (y ≥ p). swift-crypto's verification, like RFC 8032's, accepts
    /// such keys, and for them a signature can be forged without any secret: a pinned one
    /// would let anyone sign manifests. libsodium and minisign refuse them the same way.
    static func weakness(of key: [UInt8]) -> String? {
        // The encodings of the points of order 1, 2, 4 and 8 (the sign bit, the top bit of
        // the last byte, is not compared: either sign is as weak).
        let smallOrder: [[UInt8]] = [
            [UInt8](repeating: 0, count: 32),
            [1] + [UInt8](repeating: 0, count: 31),
            hexBytes("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"),
            hexBytes("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"),
            [0xec] + [UInt8](repeating: 0xff, count: 30) + [0x7f],
        ]
        for point in smallOrder where point.prefix(31).elementsEqual(key.prefix(31)) && point[31] == key[31] & 0x7f {
            return "the key is a point of small order, for which signatures can be forged: not a key to trust"
        }
        // y ≥ p = 2^255 − 19: the last byte's low 7 bits all set, bytes 1…30 all 0xff, byte 0 ≥ 0xed.
        if key[31] & 0x7f == 0x7f, key[1...30].allSatisfy({ $0 == 0xff }), key[0] >= 0xed {
            return "the key is not a canonical Ed25519 encoding (y is not below 2^255 − 19): not a key to trust"
        }
        return nil
    }

    private static func hexBytes(_ hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    /// Parses the bare base64 form (what `minisign -P` takes). `source` names
    /// where the string came from in error messages.
    public init(base64: String, source: String = "public key string") throws {
        let trimmed = base64.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.unicodeScalars.contains("\n") else {
            throw FormatError.signingKey(source: source, reason: "a bare public key is one base64 line; this text has several lines")
        }
        try self.init(decodingLine: Substring(trimmed), source: source, line: nil)
    }

    /// Parses a public key file's text: an `untrusted comment:` line and a base64
    /// line (a trailing newline and CRLF line ends are accepted).
    public init(fileContents: String, source: String = "public key file") throws {
        let lines = minisignLines(fileContents)
        guard lines.count == 2 else {
            throw FormatError.signingKey(
                source: source,
                reason: "a public key file has 2 lines (an untrusted comment and the base64 key), this one has \(lines.count)")
        }
        guard textAfterPrefix(untrustedCommentPrefix, in: lines[0]) != nil else {
            throw FormatError.signingKey(source: source, reason: "line 1 must start with \"\(untrustedCommentPrefix)\"")
        }
        try self.init(decodingLine: lines[1], source: source, line: 2)
    }

    /// Parses either form: a public key file's text or the bare base64 string.
    public init(text: String, source: String) throws {
        if minisignLines(text.trimmingCharacters(in: .whitespacesAndNewlines)).count <= 1 {
            try self.init(base64: text, source: source)
        } else {
            try self.init(fileContents: text, source: source)
        }
    }

    private init(decodingLine line: Substring, source: String, line number: Int?) throws {
        let location = number.map { "line \($0): " } ?? ""
        guard let bytes = decodeBase64(line) else {
            throw FormatError.signingKey(source: source, reason: "\(location)not valid base64")
        }
        guard bytes.count == 42 else {
            throw FormatError.signingKey(
                source: source,
                reason: "\(location)a public key decodes to 42 bytes (\"Ed\", key id, key), this decodes to \(bytes.count)")
        }
        guard Array(bytes[0..<2]) == Self.algorithm else {
            throw FormatError.signingKey(
                source: source,
                reason: "\(location)unsupported signature algorithm \(describeAlgorithm(bytes[0..<2])) (expected 'Ed')")
        }
        let key = Array(bytes[10..<42])
        if let weakness = Self.weakness(of: key) {
            throw FormatError.signingKey(source: source, reason: "\(location)\(weakness)")
        }
        keyID = MinisignKeyID(bytes: Array(bytes[2..<10]))!
        self.key = key
    }

    /// The bare base64 form, as `minisign -P` takes it.
    public var base64: String { encodeBase64(Self.algorithm + keyID.bytes + key) }

    /// The public key file's text, exactly as `minisign -G` writes it.
    public var fileContents: String {
        "\(untrustedCommentPrefix)minisign public key \(keyID.hex)\n\(base64)\n"
    }

    /// "minisign public key <KEYID>".
    public var description: String { "minisign public key \(keyID.hex)" }
}
