import Foundation

/// A JSON value whose objects keep their key order, so manifests can be written
/// byte-for-byte in the shape each app expects.
public indirect enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    /// Members in order; keys are unique.
    case object([Member])

    /// One key/value pair of an object.
    public struct Member: Equatable, Sendable {
        public let key: String
        public let value: JSONValue
        public init(_ key: String, _ value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// The member named `key` of an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// The string, if this is one.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// Serialises as pretty JSON: two-space indentation, `"key": value`, `/` and
    /// non-ASCII unescaped, a trailing newline. The same value always gives the same bytes.
    public func serialized() -> String {
        var out = ""
        write(into: &out, indent: 0)
        out.append("\n")
        return out
    }

    /// The value as it is written nested `level` objects deep (no trailing newline).
    public func serialized(nestedAt level: Int) -> String {
        var out = ""
        write(into: &out, indent: level)
        return out
    }

    private func write(into out: inout String, indent: Int) {
        switch self {
        case .null: out.append("null")
        case .bool(let b): out.append(b ? "true" : "false")
        case .int(let i): out.append(String(i))
        case .double(let d): out.append(Self.format(d))
        case .string(let s): Self.appendQuoted(s, to: &out)
        case .array(let items):
            if items.isEmpty { out.append("[]"); return }
            out.append("[\n")
            for (index, item) in items.enumerated() {
                out.append(String(repeating: "  ", count: indent + 1))
                item.write(into: &out, indent: indent + 1)
                out.append(index == items.count - 1 ? "\n" : ",\n")
            }
            out.append(String(repeating: "  ", count: indent) + "]")
        case .object(let members):
            if members.isEmpty { out.append("{}"); return }
            out.append("{\n")
            for (index, member) in members.enumerated() {
                out.append(String(repeating: "  ", count: indent + 1))
                Self.appendQuoted(member.key, to: &out)
                out.append(": ")
                member.value.write(into: &out, indent: indent + 1)
                out.append(index == members.count - 1 ? "\n" : ",\n")
            }
            out.append(String(repeating: "  ", count: indent) + "}")
        }
    }

    /// Shortest text that reads back as the same double; integral values keep a `.0`.
    public static func format(_ d: Double) -> String {
        precondition(d.isFinite, "JSON has no NaN or infinity")
        return "\(d)"
    }

    public static func appendQuoted(_ s: String, to out: inout String) {
        out.append("\"")
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out.append("\\\"")
            case "\\": out.append("\\\\")
            case "\n": out.append("\\n")
            case "\r": out.append("\\r")
            case "\t": out.append("\\t")
            case "\u{08}": out.append("\\b")
            case "\u{0C}": out.append("\\f")
            case _ where scalar.value < 0x20:
                out.append(String(format: "\\u%04x", scalar.value))
            default: out.unicodeScalars.append(scalar)
            }
        }
        out.append("\"")
    }

    /// Parses JSON text (object keys come back sorted), refusing nesting deeper than
    /// `ManifestLimits.maxDepth` levels before decoding (a hostile document must not
    /// exhaust the decoder's stack).
    public init(parsing data: Data) throws {
        try checkJSONDepth(data, limit: ManifestLimits.maxDepth)
        self = try JSONDecoder().decode(JSONValue.self, from: data)
    }
}

extension JSONValue: Codable {
    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null; return }
        // One value, tried as each JSON type in turn: a mismatch means "not this type", and
        // the last attempt (an object) throws what a value of no type gets.
        if let b = try? container.decode(Bool.self) { self = .bool(b); return }
        if let i = try? container.decode(Int64.self) { self = .int(i); return }
        if let d = try? container.decode(Double.self) { self = .double(d); return }
        if let s = try? container.decode(String.self) { self = .string(s); return }
        if let a = try? container.decode([JSONValue].self) { self = .array(a); return }
        let d = try container.decode([String: JSONValue].self)
        self = .object(d.keys.sorted().map { Member($0, d[$0]!) })
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let b): try container.encode(b)
        case .int(let i): try container.encode(i)
        case .double(let d): try container.encode(d)
        case .string(let s): try container.encode(s)
        case .array(let a): try container.encode(a)
        case .object(let m): try container.encode(Dictionary(m.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a }))
        }
    }
}
