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
            throw ModelCastError.signingKey(source: "key id \(keyID)", reason: "an Ed25519 public key is 32 bytes, not \(key.count)")
        }
        self.keyID = keyID
        self.key = key
    }

    /// Parses the bare base64 form (what `minisign -P` takes). `source` names
    /// where the string came from in error messages.
    public init(base64: String, source: String = "public key string") throws {
        let trimmed = base64.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.unicodeScalars.contains("\n") else {
            throw ModelCastError.signingKey(source: source, reason: "a bare public key is one base64 line; this text has several lines")
        }
        try self.init(decodingLine: Substring(trimmed), source: source, line: nil)
    }

    /// Parses a public key file's text: an `untrusted comment:` line and a base64
    /// line (a trailing newline and CRLF line ends are accepted).
    public init(fileContents: String, source: String = "public key file") throws {
        let lines = minisignLines(fileContents)
        guard lines.count == 2 else {
            throw ModelCastError.signingKey(
                source: source,
                reason: "a public key file has 2 lines (an untrusted comment and the base64 key), this one has \(lines.count)")
        }
        guard textAfterPrefix(untrustedCommentPrefix, in: lines[0]) != nil else {
            throw ModelCastError.signingKey(source: source, reason: "line 1 must start with \"\(untrustedCommentPrefix)\"")
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
            throw ModelCastError.signingKey(source: source, reason: "\(location)not valid base64")
        }
        guard bytes.count == 42 else {
            throw ModelCastError.signingKey(
                source: source,
                reason: "\(location)a public key decodes to 42 bytes (\"Ed\", key id, key), this decodes to \(bytes.count)")
        }
        guard Array(bytes[0..<2]) == Self.algorithm else {
            throw ModelCastError.signingKey(
                source: source,
                reason: "\(location)unsupported signature algorithm \(describeAlgorithm(bytes[0..<2])) (expected 'Ed')")
        }
        keyID = MinisignKeyID(bytes: Array(bytes[2..<10]))!
        key = Array(bytes[10..<42])
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
