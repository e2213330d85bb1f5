import Foundation

/// The 8-byte key identifier minisign stores in every key and signature.
///
/// minisign prints it as the 8 bytes read as a little-endian 64-bit integer in
/// uppercase hex without leading zeros (`%lX`, checked against minisign 0.11's
/// binary), so the printed form is the stored bytes in reverse order: bytes
/// `05 bd 9d 25 3f 30 78 d2` print as `D278303F259DBD05`, and one in sixteen ids
/// prints shorter than 16 digits.
public struct MinisignKeyID: Hashable, Sendable, CustomStringConvertible {
    /// The 8 bytes as stored in key and signature files.
    public let bytes: [UInt8]

    /// Wraps 8 stored bytes; returns nil for any other length.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 8 else { return nil }
        self.bytes = bytes
    }

    /// Parses the printed form: 1 to 16 hex digits (either case), as minisign shows it.
    public init?(hex: String) {
        let digits = Array(hex.utf8)
        guard (1...16).contains(digits.count) else { return nil }
        var value: UInt64 = 0
        for digit in digits {
            guard let nibble = hexNibble(digit) else { return nil }
            value = value << 4 | UInt64(nibble)
        }
        bytes = withUnsafeBytes(of: value.littleEndian, Array.init)
    }

    /// The stored bytes read as a little-endian integer.
    public var value: UInt64 {
        bytes.reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The form minisign prints: uppercase hex, no leading zeros.
    public var hex: String { String(value, radix: 16, uppercase: true) }

    /// The printed form, `hex`.
    public var description: String { hex }
}

private func hexNibble(_ c: UInt8) -> UInt8? {
    switch c {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
    default: return nil
    }
}

/// The prefix of the first line of every minisign file.
public let untrustedCommentPrefix = "untrusted comment: "
/// The prefix of a signature file's third line.
public let trustedCommentPrefix = "trusted comment: "

/// The lines of a minisign file: split at LF, each line's trailing CR dropped (a
/// file that went through a Windows editor), trailing empty lines ignored.
///
/// Works on Unicode scalars, not Characters: Swift treats CR LF as one Character,
/// which would hide the line break.
public func minisignLines(_ text: String) -> [Substring] {
    var lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map { scalars -> Substring in
        let line = scalars.last == "\r" ? scalars.dropLast() : scalars
        return Substring(line)
    }
    while let last = lines.last, last.isEmpty { lines.removeLast() }
    return lines
}

/// The text after `prefix` when `line` starts with exactly those bytes, else nil.
/// Byte-wise, because a Character comparison would merge a combining mark at the
/// start of a comment into the prefix's final space.
public func textAfterPrefix(_ prefix: String, in line: Substring) -> String? {
    let bytes = Array(line.utf8), prefixBytes = Array(prefix.utf8)
    guard bytes.starts(with: prefixBytes) else { return nil }
    return String(decoding: bytes[prefixBytes.count...], as: UTF8.self)
}

/// Decodes standard base64 with padding (what minisign writes), or nil. Surrounding
/// spaces and tabs are ignored, as a pasted key often carries them.
public func decodeBase64(_ text: Substring) -> [UInt8]? {
    let trimmed = text.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
    guard !trimmed.isEmpty, var data = Data(base64Encoded: trimmed) else { return nil }
    // The decoded bytes may be a secret key: clear the intermediate copy.
    defer { data.resetBytes(in: 0..<data.count) }
    return [UInt8](data)
}

/// Standard base64 with padding.
public func encodeBase64(_ bytes: [UInt8]) -> String {
    Data(bytes).base64EncodedString()
}

/// The two algorithm bytes of a minisign structure as text for an error message:
/// printable ASCII as is ("Ed"), anything else in hex ("0x0000").
public func describeAlgorithm(_ bytes: ArraySlice<UInt8>) -> String {
    if bytes.allSatisfy({ (0x21...0x7e).contains($0) }) {
        return "'" + String(decoding: bytes, as: UTF8.self) + "'"
    }
    return "0x" + bytes.map { String(format: "%02x", $0) }.joined()
}

/// Checks a comment destined for a minisign file: one line, no NUL, at most
/// `maximumBytes` UTF-8 bytes. minisign reads each line into a fixed C buffer
/// (1024 bytes for the untrusted comment line, 8192 for the trusted one, each
/// including its prefix, the line feed and the terminating NUL), so longer
/// comments would make a file minisign cannot read.
public func checkComment(_ comment: String, kind: String, maximumBytes: Int) throws {
    for (offset, byte) in comment.utf8.enumerated() {
        switch byte {
        case 0x0a: throw FormatError.invalidComment(kind: kind, reason: "contains a line feed (at byte \(offset)); it must be a single line")
        case 0x0d: throw FormatError.invalidComment(kind: kind, reason: "contains a carriage return (at byte \(offset)); it must be a single line")
        case 0x00: throw FormatError.invalidComment(kind: kind, reason: "contains a NUL byte (at byte \(offset))")
        default: continue
        }
    }
    if comment.utf8.count > maximumBytes {
        throw FormatError.invalidComment(kind: kind, reason: "is \(comment.utf8.count) bytes long; minisign reads at most \(maximumBytes)")
    }
}
