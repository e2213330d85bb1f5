import Foundation

extension SHA256Hex {
    /// The digest whose raw 32 bytes are `bytes`, as lowercase hex.
    public init(bytes: [UInt8]) {
        precondition(bytes.count == 32, "a SHA-256 digest is 32 bytes")
        self.init(computed: bytes.map { String(format: "%02x", $0) }.joined())
    }

    /// A digest written as 64 hex digits; nil for anything else (upper case included).
    public init?(hex text: String) {
        guard let parsed = try? SHA256Hex(text) else { return nil }  // the documented nil: not 64 lower-case hex digits
        self = parsed
    }

    /// The digest in lowercase hex (`rawValue`).
    public var hex: String { rawValue }

    /// The raw 32 bytes.
    public var bytes: [UInt8] {
        let digits = Array(rawValue.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(Self.nibble(digits[$0]) << 4 | Self.nibble(digits[$0 + 1])) }
    }

    private static func nibble(_ digit: UInt8) -> UInt8 { digit <= 57 ? digit - 48 : digit - 87 }
}
