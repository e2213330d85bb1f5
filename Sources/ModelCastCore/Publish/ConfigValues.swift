import Foundation
import ModelCastFormat
import Yams

/// One scalar of a config file: the text exactly as written, and the type YAML's rules
/// give it (a quoted scalar is always text; a plain one may be a number, a bool, a null
/// or a timestamp). A field that wants text takes the text whatever the type, so
/// `min_app_version: 2.10` is "2.10" and `released: 2026-03-27T10:15:00Z` keeps its time.
struct ConfigScalar: Decodable, ScalarConstructible, Sendable {
    enum Kind: Sendable, Equatable { case text, int(Int64), double(Double), bool(Bool), null, timestamp }
    let text: String
    let kind: Kind

    static func construct(from scalar: Node.Scalar) -> ConfigScalar? {
        ConfigScalar(text: scalar.string, kind: kind(of: scalar))
    }

    private init(text: String, kind: Kind) {
        self.text = text
        self.kind = kind
    }

    /// The decoder hands scalars to `construct(from:)`; any other node is not a scalar.
    init(from decoder: Decoder) throws {
        throw DecodingError.typeMismatch(ConfigScalar.self, .init(codingPath: decoder.codingPath, debugDescription: "not a scalar"))
    }

    /// The text, for a field that wants text: anything but a bare null or a bool.
    var asText: String? {
        switch kind {
        case .null, .bool: return nil
        case .text, .int, .double, .timestamp: return text
        }
    }

    /// The value, for a field that takes any JSON value (meta).
    var json: JSONValue {
        switch kind {
        case .text, .timestamp: return .string(text)
        case .int(let value): return .int(value)
        case .double(let value): return .double(value)
        case .bool(let value): return .bool(value)
        case .null: return .null
        }
    }

    /// The type of a scalar: an explicit tag or quotes say text; a plain scalar's text
    /// is typed by YAML's default rules (the decoder itself types nothing).
    private static func kind(of scalar: Node.Scalar) -> Kind {
        guard scalar.tag.description == Tag.Name.implicit.rawValue, scalar.style == .plain else { return .text }
        let text = scalar.string
        switch Resolver.default.resolveTag(of: Node.scalar(Node.Scalar(text))) {
        case .int: return Int64.construct(from: Node.Scalar(text)).map(Kind.int) ?? .text
        case .float: return Double.construct(from: Node.Scalar(text)).map(Kind.double) ?? .text
        case .bool: return Bool.construct(from: Node.Scalar(text)).map(Kind.bool) ?? .text
        case .null: return .null
        case .timestamp: return .timestamp
        default: return .text
        }
    }
}

/// Any value in a config file, for a field that takes any JSON value (meta): mappings
/// become objects with their keys in sorted order, scalars keep their YAML type.
struct ConfigValue: Decodable, Sendable {
    let json: JSONValue

    init(from decoder: Decoder) throws {
        if let mapping = try? decoder.container(keyedBy: ConfigKey.self) {
            json = .object(try mapping.allKeys.sorted { $0.stringValue < $1.stringValue }.map {
                .init($0.stringValue, try mapping.decode(ConfigValue.self, forKey: $0).json)
            })
        } else if var sequence = try? decoder.unkeyedContainer() {
            var items: [JSONValue] = []
            while !sequence.isAtEnd { items.append(try sequence.decode(ConfigValue.self).json) }
            json = .array(items)
        } else {
            json = try decoder.singleValueContainer().decode(ConfigScalar.self).json
        }
    }
}

/// A key of a config file's mapping, whatever it is called.
struct ConfigKey: CodingKey, Hashable {
    let stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// What is wrong with a config file, at a dotted key path (`models.m.files`).
struct ConfigProblem: Error {
    let message: String
}

extension KeyedDecodingContainer where Key == ConfigKey {
    /// The dotted path of `key` in the file (`models.m.version`).
    func path(_ key: String) -> String {
        (codingPath.map(\.stringValue) + [key]).joined(separator: ".")
    }

    /// The keys present that `known` does not list, each as its dotted path with the
    /// closest known key.
    func unknownKeys(known: [String]) -> [String] {
        allKeys.map(\.stringValue).filter { !known.contains($0) }.sorted().map { key in
            "'\(path(key))'" + (Spelling.suggestion(for: key, among: known).map { " (did you mean '\($0)'?)" } ?? "")
        }
    }

    /// The text of a key that wants text, nil when absent.
    func text(_ key: String) throws -> String? {
        guard contains(ConfigKey(key)) else { return nil }
        let scalar = try? decode(ConfigScalar.self, forKey: ConfigKey(key))
        guard let text = scalar?.asText else {
            let given = scalar.map { $0.text.isEmpty ? "empty" : "'\($0.text)'" } ?? "a mapping or a list"
            throw ConfigProblem(message: "\(path(key)) must be a string, not \(given)")
        }
        return text
    }

    /// The members of a key that holds a mapping of free values (meta), nil when absent.
    func members(_ key: String) throws -> [String: JSONValue]? {
        guard contains(ConfigKey(key)) else { return nil }
        guard case .object(let members)? = (try? decode(ConfigValue.self, forKey: ConfigKey(key)))?.json else {
            throw ConfigProblem(message: "\(path(key)) must be a mapping")
        }
        return Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last })
    }

    /// The paths listed under `key`: one path or a list of them; nil when absent.
    func paths(_ key: String) throws -> [String]? {
        try texts(key, what: "file paths")
    }

    /// The texts under `key`: one or a list of them; nil when absent. `what` says what
    /// they are in the error (`file paths`, `accelerator names`).
    func texts(_ key: String, what: String) throws -> [String]? {
        guard contains(ConfigKey(key)) else { return nil }
        let problem = ConfigProblem(message: "\(path(key)) must list \(what)")
        if let one = try? decode(ConfigScalar.self, forKey: ConfigKey(key)) {
            guard let text = one.asText else { throw problem }
            return [text]
        }
        guard let list = try? decode([ConfigScalar].self, forKey: ConfigKey(key)) else { throw problem }
        return try list.map { try $0.asText ?? { throw problem }() }
    }

    /// The mapping under `key`, nil when absent; `shape` says what it must be.
    func mapping(_ key: String, shape: String) throws -> KeyedDecodingContainer<ConfigKey>? {
        guard contains(ConfigKey(key)) else { return nil }
        guard let nested = try? nestedContainer(keyedBy: ConfigKey.self, forKey: ConfigKey(key)) else {
            throw ConfigProblem(message: "\(path(key)) must be \(shape)")
        }
        return nested
    }
}
