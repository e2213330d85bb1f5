import Foundation
import ModelCastFormat
import Yams

/// A node of a config file and where it sits in it.
struct ConfigNode {
    let node: Node
    let path: ConfigPath

    /// The mapping's keys and values with its merges (`<<: *defaults`) applied as YAML's
    /// merge key says: the merged mappings' pairs first, then its own, so where a key
    /// repeats the last one wins (the mapping's own over a merged one). A key that is not
    /// text is left out: `ConfigKeyCheck` refuses it before anything is read. Nil when the
    /// node is not a mapping.
    var pairs: [(key: String, value: ConfigNode)]? {
        guard case .mapping(let mapping) = node else { return nil }
        return Self.flattened(mapping).compactMap { pair in
            pair.key.scalar.map { (key: $0.string, value: ConfigNode(node: pair.value, path: path.appending($0.string))) }
        }
    }

    /// The list's items, nil when the node is not a list.
    var items: [ConfigNode]? {
        guard case .sequence(let sequence) = node else { return nil }
        return sequence.enumerated().map { ConfigNode(node: $1, path: path.appending(index: $0)) }
    }

    /// The scalar, nil when the node is a mapping or a list.
    var scalar: ConfigScalar? {
        node.scalar.map(ConfigScalar.init)
    }

    /// The text of a scalar, for a key that wants text; a mapping, a list, a bare null or
    /// a bool is refused naming the path and what was there.
    func text() throws -> String {
        guard let text = scalar?.asText else {
            let given = scalar.map { $0.text.isEmpty ? "empty" : quotedValue($0.text) } ?? "a mapping or a list"
            throw ConfigProblem(message: "\(path) must be a string, not \(given)")
        }
        return text
    }

    /// The value, for a key that takes any value (meta): mappings become objects with
    /// their keys in sorted order, scalars keep their YAML type.
    func json() throws -> JSONValue {
        switch node {
        case .mapping:
            var members: [String: JSONValue] = [:]
            for (key, value) in pairs ?? [] { members[key] = try value.json() }
            return .object(members.keys.sorted().map { .init($0, members[$0]!) })
        case .sequence:
            return .array(try (items ?? []).map { try $0.json() })
        case .scalar(let scalar):
            return try ConfigScalar(scalar).json(at: path)
        }
    }

    /// A mapping's pairs, merges applied (Yams' decoder did the same for the keyed containers it handed out).
    static func flattened(_ mapping: Node.Mapping) -> [(key: Node, value: Node)] {
        var merged: [(key: Node, value: Node)] = []
        var own: [(key: Node, value: Node)] = []
        for (key, value) in mapping {
            guard isMerge(key) else { own.append((key, value)); continue }
            switch value {
            case .mapping(let inner): merged += flattened(inner)
            case .sequence(let list):
                // The first mapping listed wins, so it goes last.
                for case .mapping(let inner) in list.reversed() { merged += flattened(inner) }
            case .scalar: break   // refused by ConfigKeyCheck
            }
        }
        return merged + own
    }

    /// A plain `<<` key: YAML's merge key (a quoted one is an ordinary key).
    static func isMerge(_ key: Node) -> Bool {
        key.scalar != nil && key.tag.description == Tag.Name.merge.rawValue
    }
}

/// One scalar of a config file: the text exactly as written, and the type YAML's rules
/// give it (a quoted scalar is always text; a plain one may be a number, a bool, a null
/// or a timestamp). A field that wants text takes the text whatever the type, so
/// `min_app_version: 2.10` is "2.10" and `released: 2026-03-27T10:15:00Z` keeps its time.
struct ConfigScalar: Sendable {
    enum Kind: Sendable, Equatable {
        case text, int(Int64), double(Double), bool(Bool), null, timestamp
        /// An integer YAML's rules see that 64 bits cannot hold.
        case outsideInt64
    }

    let text: String
    let kind: Kind

    init(_ scalar: Node.Scalar) {
        text = scalar.string
        kind = Self.kind(of: scalar)
    }

    /// The text, for a field that wants text: anything but a bare null or a bool.
    var asText: String? {
        switch kind {
        case .null, .bool: return nil
        case .text, .int, .double, .timestamp, .outsideInt64: return text
        }
    }

    /// The value, for a field that takes any JSON value (meta). A number JSON cannot carry
    /// (`1e400`, `.inf`, an integer past 64 bits) is refused here: the manifest writer
    /// has no form for it, and turning it into text would change its type unasked.
    func json(at path: ConfigPath) throws -> JSONValue {
        switch kind {
        case .text, .timestamp: return .string(text)
        case .int(let value): return .int(value)
        case .double(let value):
            guard value.isFinite else {
                throw ConfigProblem(message: "\(path): \(text) is not a finite number (JSON has no infinity or NaN); quote it to publish it as text")
            }
            return .double(value)
        case .outsideInt64:
            throw ConfigProblem(message: "\(path): \(text) is not a 64-bit integer; quote it to publish it as text")
        case .bool(let value): return .bool(value)
        case .null: return .null
        }
    }

    /// The type of a scalar: an explicit tag or quotes say text; a plain scalar's text
    /// is typed by YAML's default rules (the parser itself types nothing).
    private static func kind(of scalar: Node.Scalar) -> Kind {
        guard scalar.tag.description == Tag.Name.implicit.rawValue, scalar.style == .plain else { return .text }
        let text = scalar.string
        switch Resolver.default.resolveTag(of: Node.scalar(Node.Scalar(text))) {
        case .int: return Int64.construct(from: Node.Scalar(text)).map(Kind.int) ?? .outsideInt64
        case .float: return Double.construct(from: Node.Scalar(text)).map(Kind.double) ?? .text
        case .bool: return Bool.construct(from: Node.Scalar(text)).map(Kind.bool) ?? .text
        case .null: return .null
        case .timestamp: return .timestamp
        default: return .text
        }
    }
}

/// What is wrong with a config file, at a key path (`models.m.files`).
struct ConfigProblem: Error {
    let message: String
}
