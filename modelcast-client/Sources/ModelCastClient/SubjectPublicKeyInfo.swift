import Foundation
import ModelCastFormat

/// The parts of a DER SubjectPublicKeyInfo (the body of a PEM `PUBLIC KEY`) a
/// model-signing key is judged by: its algorithm, its named curve and its key bits. Read
/// strictly (definite lengths, nothing left over) but only as far as needed to accept a
/// P-256 key or to say what another key is.
struct SubjectPublicKeyInfo {
    /// The algorithm's object identifier, dotted (`1.2.840.10045.2.1` for an EC key).
    let algorithm: String
    /// The named curve's object identifier, dotted, when the parameters are one.
    let curve: String?
    /// The BIT STRING's bytes (for an EC key, the point: `04 X Y` or `02|03 X`).
    let key: [UInt8]

    static let ecPublicKey = "1.2.840.10045.2.1"
    static let prime256v1 = "1.2.840.10045.3.1.7"
    /// The DER a P-256 key with an uncompressed point starts with, before its 65 point bytes.
    static let p256UncompressedPrefix: [UInt8] = [
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01,
        0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
    ]

    /// Names for the messages that refuse a key.
    static let algorithmNames = [
        ecPublicKey: "EC", "1.2.840.113549.1.1.1": "RSA", "1.2.840.10040.4.1": "DSA",
        "1.3.101.110": "X25519", "1.3.101.111": "X448", "1.3.101.112": "Ed25519", "1.3.101.113": "Ed448",
    ]
    static let curveNames = [
        prime256v1: "prime256v1", "1.3.132.0.34": "secp384r1", "1.3.132.0.35": "secp521r1", "1.3.132.0.10": "secp256k1",
    ]

    /// nil when `der` is not a SubjectPublicKeyInfo.
    init?(der: [UInt8]) {
        var outer = DERReader(der[...])
        guard let info = outer.read(tag: 0x30), outer.isAtEnd else { return nil }
        var body = DERReader(info)
        guard let identifier = body.read(tag: 0x30), let bits = body.read(tag: 0x03), body.isAtEnd,
              bits.first == 0 else { return nil }  // a key is whole bytes: no unused bits
        var parts = DERReader(identifier)
        guard let oid = parts.read(tag: 0x06) else { return nil }
        algorithm = Self.dotted(oid)
        curve = parts.read(tag: 0x06).map(Self.dotted)
        key = Array(bits.dropFirst())
    }

    /// An object identifier's content bytes as dotted decimal.
    static func dotted(_ bytes: ArraySlice<UInt8>) -> String {
        var arcs: [UInt64] = []
        var value: UInt64 = 0
        for byte in bytes {
            value = value &<< 7 | UInt64(byte & 0x7f)
            if byte & 0x80 == 0 {
                arcs.append(value)
                value = 0
            }
        }
        guard let first = arcs.first else { return "" }
        let head: [UInt64] = first < 80 ? [first / 40, first % 40] : [2, first - 80]
        return (head + arcs.dropFirst()).map(String.init).joined(separator: ".")
    }
}

/// Reads DER tag-length-value items one after another.
private struct DERReader {
    private var bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    var isAtEnd: Bool { bytes.isEmpty }

    /// The content of the next item when its tag is `tag` (consumed), else nil.
    mutating func read(tag: UInt8) -> ArraySlice<UInt8>? {
        guard bytes.count >= 2, bytes.first == tag else { return nil }
        var index = bytes.startIndex + 1
        var length = Int(bytes[index])
        index += 1
        if length & 0x80 != 0 {
            let count = length & 0x7f
            guard (1...2).contains(count), bytes.endIndex - index >= count else { return nil }
            length = 0
            for _ in 0..<count {
                length = length << 8 | Int(bytes[index])
                index += 1
            }
        }
        guard bytes.endIndex - index >= length else { return nil }
        let content = bytes[index..<(index + length)]
        bytes = bytes[(index + length)...]
        return content
    }
}
