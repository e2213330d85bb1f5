import Foundation

/// One JSON object of a model-signing bundle or its statement, which are hostile input: it
/// must be an object, hold only the members its kind has (unless `allowed` is nil, for
/// objects whose specification says unknown members are ignored), and each member must
/// have its type. Errors are `ManifestValueError`s naming the member's place
/// (`payload.predicate.resources[3].digest`) and the value.
struct BundleJSONObject {
    let field: String
    private let members: [String: JSONValue]

    /// The longest string read, other than base64 fields (which have their own limits).
    static let maximumText = 4096

    init(_ value: JSONValue, field: String, allowed: Set<String>?) throws {
        guard case .object(let list) = value else { throw Self.refuse(field, value, "is not a JSON object") }
        var members: [String: JSONValue] = [:]
        for member in list {
            if let allowed, !allowed.contains(member.key) {
                throw ManifestValueError(field: field, value: quotedValue(member.key),
                                         rule: "is not a member of this object (expected: \(allowed.sorted().joined(separator: ", ")))")
            }
            members[member.key] = member.value
        }
        self.field = field
        self.members = members
    }

    func path(_ key: String) -> String { field + "." + key }

    func has(_ key: String) -> Bool { members[key] != nil }

    func value(_ key: String) throws -> JSONValue {
        guard let value = members[key] else { throw ManifestValueError(field: path(key), value: "(missing)", rule: "is required") }
        return value
    }

    func object(_ key: String, allowed: Set<String>?) throws -> BundleJSONObject {
        try BundleJSONObject(value(key), field: path(key), allowed: allowed)
    }

    /// A string of at most `limit` UTF-8 bytes.
    func string(_ key: String, limit: Int = maximumText) throws -> String {
        try Self.string(value(key), field: path(key), limit: limit)
    }

    static func string(_ value: JSONValue, field: String, limit: Int = maximumText) throws -> String {
        guard case .string(let text) = value else { throw refuse(field, value, "is not a string") }
        guard text.utf8.count <= limit else { throw refuse(field, value, "is longer than \(limit) bytes") }
        return text
    }

    /// A string that must be exactly `expected` (a media type, an algorithm name).
    func constant(_ key: String, _ expected: String, otherwise rule: String? = nil) throws {
        let text = try string(key)
        guard text == expected else {
            throw ManifestValueError(field: path(key), value: quotedValue(text), rule: rule ?? "is not '\(expected)'")
        }
    }

    func bool(_ key: String) throws -> Bool {
        let value = try value(key)
        guard case .bool(let flag) = value else { throw Self.refuse(path(key), value, "is not true or false") }
        return flag
    }

    /// An array of at most `limit` items.
    func array(_ key: String, limit: Int) throws -> [JSONValue] {
        let value = try value(key)
        guard case .array(let items) = value else { throw Self.refuse(path(key), value, "is not an array") }
        guard items.count <= limit else { throw ManifestValueError(field: path(key), value: "(\(items.count) items)", rule: "has more than \(limit) items") }
        return items
    }

    /// 64 lowercase hex digits, as model_signing writes every digest.
    func digest(_ key: String) throws -> SHA256Hex {
        let text = try string(key)
        guard let digest = SHA256Hex(hex: text) else {
            throw ManifestValueError(field: path(key), value: quotedValue(text), rule: "is not a SHA-256 digest (64 lowercase hex digits)")
        }
        return digest
    }

    /// Strict standard base64 (RFC 4648 alphabet, padded, canonical) of at most `limit`
    /// decoded bytes.
    func base64(_ key: String, limit: Int) throws -> [UInt8] {
        let text = try string(key, limit: (limit + 2) / 3 * 4)
        guard let bytes = strictBase64(text) else {
            throw ManifestValueError(field: path(key), value: quotedValue(text, limit: 40), rule: "is not standard padded base64")
        }
        return bytes
    }

    static func refuse(_ field: String, _ value: JSONValue, _ rule: String) -> ManifestValueError {
        let shown: String
        switch value {
        case .string(let text): shown = quotedValue(text)
        case .object: shown = "(an object)"
        case .array(let items): shown = "(an array of \(items.count))"
        default: shown = value.serialized(nestedAt: 0)
        }
        return ManifestValueError(field: field, value: shown, rule: rule)
    }
}

/// Decodes standard base64 only when it is canonical: alphabet `A–Z a–z 0–9 + /`, padded
/// to a multiple of four with at most two `=`, and re-encoding gives the same text (so no
/// stray bits). Anything else is nil.
func strictBase64(_ text: String) -> [UInt8]? {
    let bytes = Array(text.utf8)
    guard bytes.count % 4 == 0 else { return nil }
    let padding = bytes.reversed().prefix { $0 == UInt8(ascii: "=") }.count
    guard padding <= 2 else { return nil }
    let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    guard bytes.dropLast(padding).allSatisfy(alphabet.contains), let data = Data(base64Encoded: text) else { return nil }
    let decoded = [UInt8](data)
    return Data(decoded).base64EncodedString() == text ? decoded : nil
}
