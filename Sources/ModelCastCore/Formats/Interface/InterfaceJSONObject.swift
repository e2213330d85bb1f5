import Foundation

/// One JSON object of an interface read back from a manifest, which is hostile input: it must
/// be an object, hold only the members its kind has, and each member must have its type.
/// Errors are `ManifestValueError`s naming the member's place (`interface.inputs[0].shape[2]`).
struct InterfaceJSONObject {
    let field: String
    private let members: [String: JSONValue]

    /// Longest name or text read (bytes), and most items of a list.
    static let maxText = 4096
    static let maxItems = 4096

    init(_ value: JSONValue, field: String, allowed: Set<String>) throws {
        guard case .object(let list) = value else { throw Self.refuse(field, value, "is not a JSON object") }
        var members: [String: JSONValue] = [:]
        for member in list {
            guard allowed.contains(member.key) else {
                throw ManifestValueError(field: field, value: quotedValue(member.key), rule: "is not a member of this interface object (allowed: \(allowed.sorted().joined(separator: ", ")))")
            }
            guard members.updateValue(member.value, forKey: member.key) == nil else {
                throw ManifestValueError(field: field, value: quotedValue(member.key), rule: "appears twice")
            }
        }
        self.field = field
        self.members = members
    }

    static func refuse(_ field: String, _ value: JSONValue, _ rule: String) -> ManifestValueError {
        let text: String
        if case .string(let string) = value { text = quotedValue(string) } else {
            // On one line: each line of the pretty form without its indentation.
            let compact = value.serialized(nestedAt: 0).split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined()
            text = compact.count > 80 ? String(compact.prefix(80)) + "…" : compact
        }
        return ManifestValueError(field: field, value: text, rule: rule)
    }

    func path(_ key: String) -> String { field + "." + key }

    func value(_ key: String) throws -> JSONValue {
        guard let value = members[key] else { throw ManifestValueError(field: path(key), value: "(missing)", rule: "is required") }
        return value
    }

    func has(_ key: String) -> Bool { members[key] != nil }

    /// A string of at most `maxText` bytes; `empty` allows "".
    func string(_ key: String, empty: Bool = false) throws -> String {
        try Self.string(value(key), field: path(key), empty: empty)
    }

    func optionalString(_ key: String) throws -> String? { has(key) ? try string(key) : nil }

    static func string(_ value: JSONValue, field: String, empty: Bool = false) throws -> String {
        guard case .string(let text) = value else { throw refuse(field, value, "is not a string") }
        guard empty || !text.isEmpty else { throw refuse(field, value, "is empty") }
        guard text.utf8.count <= maxText else { throw refuse(field, value, "is longer than \(maxText) bytes") }
        return text
    }

    /// A whole number, 0 or more.
    func count(_ key: String) throws -> Int64 { try Self.count(value(key), field: path(key)) }

    func optionalCount(_ key: String) throws -> Int64? { has(key) ? try count(key) : nil }

    static func count(_ value: JSONValue, field: String) throws -> Int64 {
        guard case .int(let number) = value, number >= 0 else { throw refuse(field, value, "is not a whole number 0 or more") }
        return number
    }

    func bool(_ key: String) throws -> Bool? {
        guard let value = members[key] else { return nil }
        guard case .bool(let flag) = value else { throw Self.refuse(path(key), value, "is not true or false") }
        return flag
    }

    /// An array of at most `limit` items.
    func array(_ key: String, limit: Int = maxItems) throws -> [JSONValue] { try Self.array(value(key), field: path(key), limit: limit) }

    static func array(_ value: JSONValue, field: String, limit: Int = maxItems) throws -> [JSONValue] {
        guard case .array(let items) = value else { throw refuse(field, value, "is not an array") }
        guard items.count <= limit else { throw refuse(field, value, "has more than \(limit) items") }
        return items
    }

    func digest(_ key: String) throws -> SHA256Digest? {
        guard has(key) else { return nil }
        let text = try string(key)
        guard let digest = SHA256Digest(hex: text), digest.hex == text else {
            throw Self.refuse(path(key), .string(text), "is not a SHA-256 digest (64 lowercase hex digits)")
        }
        return digest
    }

    /// An enum value written by name (one this modelcast knows) or by number.
    func code<Names>(_ key: String) throws -> NamedCode<Names> {
        let value = try value(key)
        switch value {
        case .string(let name):
            guard let code = NamedCode<Names>(name: name) else {
                throw Self.refuse(path(key), value, "is not one of \(Names.names.values.sorted().joined(separator: ", ")) (or a number)")
            }
            return code
        case .int(let number):
            // A known number is written by its name; a number is only for one this modelcast does not know.
            guard Names.names[number] == nil else { throw Self.refuse(path(key), value, "must be written by its name \(Names.names[number]!)") }
            return NamedCode(number)
        default: throw Self.refuse(path(key), value, "is not a name or a number")
        }
    }

    /// The features or values of a list member, each read by `read` and with a name no other has.
    func namedItems<T>(_ key: String, _ read: (JSONValue, String) throws -> (name: String, item: T)) throws -> [T] {
        var names = Set<String>()
        return try array(key).enumerated().map { index, value in
            let field = "\(path(key))[\(index)]"
            let (name, item) = try read(value, field)
            guard names.insert(name).inserted else { throw ManifestValueError(field: field + ".name", value: quotedValue(name), rule: "names two items") }
            return item
        }
    }
}
