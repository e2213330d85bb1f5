import Foundation

/// The inline form of a `modelcast` manifest's signature, for clients that want one file.
///
/// The manifest carries a last member `"signature"`. The signed bytes are the manifest
/// exactly as modelcast writes it without that member: take the file, cut it at the
/// last occurrence of the seven bytes `,` `\n` and two spaces before `"signature": `
/// (`,\n  "signature": `), and append `\n}\n`. No string in a modelcast manifest holds
/// a raw newline (JSON escapes it), so the cut is unambiguous. The member holds the
/// parts of a minisign signature file, so a client can also rebuild
/// `manifest.json.minisig` over the signed bytes and check it with minisign.
public enum InlineSignature {
    public static let marker = Array(",\n  \"signature\": ".utf8)
    public static let closing = Array("\n}\n".utf8)

    /// The signed bytes of `manifest`: the manifest without its signature member, or
    /// the manifest itself when it has none.
    @Sendable public static func strip(_ manifest: Data) -> Data {
        split(manifest)?.signed ?? manifest
    }

    /// The signed bytes and the signature member's JSON text, or nil when the manifest
    /// carries no inline signature.
    public static func split(_ manifest: Data) -> (signed: Data, member: Data)? {
        let bytes = [UInt8](manifest)
        guard bytes.count > marker.count + closing.count, bytes.suffix(closing.count).elementsEqual(closing) else { return nil }
        var index = bytes.count - closing.count - marker.count
        while index >= 0 {
            if bytes[index] == marker[0], bytes[index..<(index + marker.count)].elementsEqual(marker) {
                let member = Data(bytes[(index + marker.count)..<(bytes.count - closing.count)])
                return (Data(bytes[..<index] + closing), member)
            }
            index -= 1
        }
        return nil
    }

    /// `manifest` (as modelcast serialises it, without a signature) with `member`
    /// appended as its last member.
    public static func attach(_ member: JSONValue, to manifest: Data) throws -> Data {
        let bytes = [UInt8](manifest)
        guard bytes.count > closing.count, bytes.suffix(closing.count).elementsEqual(closing), split(manifest) == nil else {
            throw FormatError.invalidInlineSignature("cannot attach an inline signature: the manifest is not in modelcast's canonical form")
        }
        let signed = Data(bytes.dropLast(closing.count) + marker + Array(member.serialized(nestedAt: 1).utf8) + closing)
        // The rule clients follow must give back exactly the bytes that were signed.
        guard split(signed)?.signed == manifest else {
            throw FormatError.invalidInlineSignature("cannot attach an inline signature: the manifest is not in modelcast's canonical form")
        }
        return signed
    }

    /// The signature member for a minisign signature file: its signature line, trusted
    /// comment and global signature line.
    public static func member(fromSignatureFile file: String) throws -> JSONValue {
        let lines = file.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let trustedPrefix = "trusted comment: "
        guard lines.count >= 4, lines[0].hasPrefix("untrusted comment:"), lines[2].hasPrefix(trustedPrefix) else {
            throw FormatError.invalidInlineSignature("not a minisign signature file: expected untrusted comment, signature, trusted comment and global signature lines")
        }
        return .object([
            .init("format", .string("minisign")),
            .init("signature", .string(lines[1])),
            .init("trusted_comment", .string(String(lines[2].dropFirst(trustedPrefix.count)))),
            .init("global_signature", .string(lines[3])),
        ])
    }

    /// The minisign signature file an inline signature member stands for.
    public static func signatureFile(fromMember member: Data) throws -> String {
        func fail(_ why: String) -> FormatError { .invalidInlineSignature("inline signature: \(why)") }
        let value: JSONValue
        do { value = try JSONValue(parsing: member) } catch { throw fail("not valid JSON") }
        guard value["format"]?.stringValue == "minisign" else { throw fail("format is not \"minisign\"") }
        guard let signature = value["signature"]?.stringValue, let comment = value["trusted_comment"]?.stringValue,
              let global = value["global_signature"]?.stringValue else {
            throw fail("signature, trusted_comment and global_signature must all be strings")
        }
        guard ![signature, comment, global].contains(where: { $0.contains("\n") || $0.contains("\r") }) else {
            throw fail("a field contains a line break")
        }
        return "untrusted comment: inline signature\n\(signature)\ntrusted comment: \(comment)\n\(global)\n"
    }
}
