import Foundation
import ModelCastClient
import ModelCastFormat

/// The option values of the protocol, parsed exactly: each accepts one written form and
/// refuses anything else with a `UsageError` that names the option (`label`) and the value.
enum StrictValue {
    /// Decimal digits only (no sign, no unit, no exponent) that fit in 63 bits.
    static func count(_ text: String, _ label: String, positive: Bool, unit: String) throws -> Int64 {
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let value = Int64(text), !positive || value > 0 else {
            throw UsageError("\(label) \(quotedValue(text)) is not \(positive ? "a positive" : "a") number of \(unit) (decimal digits)")
        }
        return value
    }

    /// Seconds written `30` or `2.5`, more than zero.
    static func seconds(_ text: String, _ label: String) throws -> TimeInterval {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let digits = parts.allSatisfy { !$0.isEmpty && $0.utf8.allSatisfy { (0x30...0x39).contains($0) } }
        guard digits, let value = TimeInterval(text), value.isFinite, value > 0 else {
            throw UsageError("\(label) \(quotedValue(text)) is not a positive number of seconds (30, 2.5)")
        }
        return value
    }

    /// A name for people and logs: printable, no space or control character, at most 256 characters.
    static func name(_ text: String, _ label: String) throws -> String {
        let visible = text.unicodeScalars.allSatisfy { scalar in
            !scalar.properties.isWhitespace && escapedLine(String(scalar)) == String(scalar)
        }
        guard !text.isEmpty, text.unicodeScalars.count <= 256, visible else {
            throw UsageError("\(label) \(quotedValue(text)) is not a name (visible characters, no space, at most 256)")
        }
        return text
    }

    /// The channel's manifest URL: `http://` or `https://` with a host, no user or password.
    static func manifestURL(_ text: String, _ label: String) throws -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty else {
            throw UsageError("\(label) \(quotedValue(text)) is not an http:// or https:// URL")
        }
        guard url.user == nil, url.password == nil else { throw UsageError("\(label) carries a user name or password; it is not kept") }
        return url
    }

    /// An app or OS version as the manifest's `min_app_version` and `platforms` compare them.
    static func version(_ text: String, _ label: String) throws -> String {
        do { _ = try AppVersion(text) } catch { throw UsageError("\(label) \(quotedValue(text)) is not a version (e.g. 5.2, 1.4.0, 17.4.1)") }
        return text
    }

    /// The text of a file the option names: a regular file of at most `limit` bytes, read in
    /// full. Key files are read at `init` and their text kept, so nothing outside the
    /// client's directory is needed later.
    static func fileText(_ path: String, _ label: String, limit: Int = 64 << 10) throws -> String {
        // A link to a key file is fine: what matters is the file it leads to.
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        let attributes: [FileAttributeKey: Any]
        do { attributes = try FileManager.default.attributesOfItem(atPath: resolved) } catch {
            throw UsageError("\(label) \(quotedValue(path)): no such file")
        }
        guard attributes[.type] as? FileAttributeType == .typeRegular else { throw UsageError("\(label) \(quotedValue(path)) is not a regular file") }
        guard let size = (attributes[.size] as? NSNumber)?.intValue, size <= limit else {
            throw UsageError("\(label) \(quotedValue(path)) is larger than \(limit) bytes; it is no key")
        }
        guard let data = FileManager.default.contents(atPath: resolved), let text = String(data: data, encoding: .utf8) else {
            throw UsageError("\(label) \(quotedValue(path)) cannot be read as UTF-8 text")
        }
        return text
    }
}
