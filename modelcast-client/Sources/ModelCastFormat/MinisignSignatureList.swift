import Foundation

/// Several minisign signatures over one file, concatenated in one file: `keys/N.json.sigs`
/// (every root signature of a key set) and `manifest.json.sigs` (every manifest key's
/// signature). Each is the 4 lines of a `.minisig` file (untrusted comment, signature,
/// trusted comment, global signature), one after the other with nothing between them.
public struct MinisignSignatureList: Sendable, Equatable {
    /// The most signatures a list holds.
    public static let maxSignatures = 16
    /// The largest list read, in bytes (16 KiB); a larger one is refused unparsed.
    public static let maxBytes = 16 << 10

    /// The signatures, in the file's order.
    public let signatures: [MinisignSignature]

    /// Wraps 1 to `maxSignatures` signatures (the writer's side).
    public init(_ signatures: [MinisignSignature], source: String = "signature list") throws {
        guard (1...Self.maxSignatures).contains(signatures.count) else {
            throw FormatError.malformedSignature(source: source, reason: "a signature list holds 1 to \(Self.maxSignatures) signatures, not \(signatures.count)")
        }
        self.signatures = signatures
    }

    /// Parses a list as served: at most `maxBytes`, UTF-8, a multiple of 4 lines, 1 to
    /// `maxSignatures` signatures, each read by `MinisignSignature(fileContents:)`. Errors
    /// name `source`, the signature's number and its lines.
    public init(data: Data, source: String) throws {
        guard data.count <= Self.maxBytes else {
            throw FormatError.malformedSignature(source: source, reason: "\(data.count) bytes, more than a signature list may be (\(Self.maxBytes))")
        }
        let bytes = [UInt8](data)
        let text = String(decoding: bytes, as: UTF8.self)
        guard Array(text.utf8) == bytes else { throw FormatError.malformedSignature(source: source, reason: "not UTF-8 text") }
        let lines = minisignLines(text)
        guard !lines.isEmpty else { throw FormatError.malformedSignature(source: source, reason: "the file holds no signature") }
        guard lines.count % 4 == 0 else {
            throw FormatError.malformedSignature(source: source, reason: "\(lines.count) lines: a list of minisign signatures has 4 lines per signature")
        }
        guard lines.count / 4 <= Self.maxSignatures else {
            throw FormatError.malformedSignature(source: source, reason: "\(lines.count / 4) signatures, more than a list may hold (\(Self.maxSignatures))")
        }
        var signatures: [MinisignSignature] = []
        for start in stride(from: 0, to: lines.count, by: 4) {
            let number = start / 4 + 1
            let file = lines[start..<start + 4].joined(separator: "\n") + "\n"
            signatures.append(try MinisignSignature(fileContents: file, source: "\(source), signature \(number) (lines \(start + 1)–\(start + 4))"))
        }
        self.signatures = signatures
    }

    /// The file's text: each signature's `.minisig` text, in order.
    public var fileContents: String { signatures.map(\.fileContents).joined() }
}
