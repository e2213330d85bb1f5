import Foundation
import ModelCastFormat

/// A mapping of a config file read as the keys of `Place`: each value is read through
/// its `ConfigField`, which names the key and says what type it has, so the decoder
/// cannot read a key the definitions do not list at this place. Keys have been checked
/// (`ConfigKeyCheck`) before an entry is made; the accessors check the values.
struct ConfigEntry<Place: ConfigPlace> {
    /// Where the mapping is.
    let path: ConfigPath
    private let pairs: [(key: String, value: ConfigNode)]
    private let log: ConfigReadLog?

    /// The entry for `node`, nil when it is not a mapping.
    init?(_ node: ConfigNode, log: ConfigReadLog?) {
        guard let pairs = node.pairs else { return nil }
        self.path = node.path
        self.pairs = pairs
        self.log = log
    }

    /// The value of `field`, nil when absent (where a merge and the mapping both give it,
    /// the mapping's own).
    func node(_ field: ConfigField<Place>) -> ConfigNode? {
        log?.note(Place.section, field.name)
        return pairs.last { $0.key == field.name }?.value
    }

    func contains(_ field: ConfigField<Place>) -> Bool {
        node(field) != nil
    }

    /// The path of `field` in the file.
    func path(_ field: ConfigField<Place>) -> ConfigPath {
        path.appending(field.name)
    }

    /// The text of a key that wants text, nil when absent.
    func text(_ field: ConfigField<Place>) throws -> String? {
        assert(field.definition.kind.isScalarText, "\(field.name) is not read as text")
        return try node(field)?.text()
    }

    /// The value of a key that is one of `Value`'s words, nil when absent; another word is
    /// refused naming the key's path and the words.
    func choice<Value: RawRepresentable & CaseIterable>(_ field: ConfigField<Place>, as _: Value.Type) throws -> Value? where Value.RawValue == String {
        guard let raw = try text(field) else { return nil }
        guard let value = Value(rawValue: raw) else {
            throw ConfigProblem(message: "\(path(field)) \(quotedValue(raw)) is not one of \(Value.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return value
    }

    /// A key that is one of `Value`'s words or a mapping of `Inner`'s keys.
    enum ChoiceOrEntry<Value, Inner: ConfigPlace> {
        case none
        case choice(Value)
        case entry(ConfigEntry<Inner>)
    }

    /// The value of a key that takes a word or a mapping (`download: on-demand`, or
    /// `download: {policy: on-demand, network: unmetered}`).
    func choiceOrEntry<Value: RawRepresentable & CaseIterable, Inner: ConfigPlace>(
        _ field: ConfigField<Place>, as _: Value.Type, entry _: Inner.Type
    ) throws -> ChoiceOrEntry<Value, Inner> where Value.RawValue == String {
        assert(field.definition.kind.nested?.id == Inner.section.id, "\(field.name) does not hold \(Inner.section.id)")
        guard let value = node(field) else { return .none }
        if let inner = ConfigEntry<Inner>(value, log: log) { return .entry(inner) }
        let words = Value.allCases.map(\.rawValue).joined(separator: ", ")
        guard let raw = value.scalar?.asText else {
            throw ConfigProblem(message: "\(value.path) must be one of \(words), or a mapping with \(Inner.section.names.joined(separator: ", "))")
        }
        guard let parsed = Value(rawValue: raw) else { throw ConfigProblem(message: "\(value.path) \(quotedValue(raw)) is not one of \(words)") }
        return .choice(parsed)
    }

    /// The texts of a key that takes one or a list (`what` says what they are in the
    /// error: `file paths`, `names`), nil when absent.
    func texts(_ field: ConfigField<Place>, what: String) throws -> [String]? {
        assert(field.definition.kind.isTextList, "\(field.name) is not read as a list of texts")
        guard let value = node(field) else { return nil }
        let problem = ConfigProblem(message: "\(value.path) must list \(what)")
        if let one = value.scalar {
            guard let text = one.asText else { throw problem }
            return [text]
        }
        guard let items = value.items else { throw problem }
        return try items.map { try $0.scalar?.asText ?? { throw problem }() }
    }

    /// The paths listed under a key: one path or a list of them; nil when absent.
    func paths(_ field: ConfigField<Place>) throws -> [String]? {
        try texts(field, what: "file paths")
    }

    /// The paths of a key with two spellings (`files` and `file`), `other`'s after
    /// `required`'s; refused naming `required`, the key the reference calls required, when
    /// neither lists one.
    func requiredPaths(_ required: ConfigField<Place>, or other: ConfigField<Place>) throws -> [String] {
        let files = try (paths(required) ?? []) + (paths(other) ?? [])
        guard !files.isEmpty else { throw ConfigProblem(message: "\(path(required)) is missing") }
        return files
    }

    /// The members of a key that holds a mapping of free values (meta), nil when absent.
    func members(_ field: ConfigField<Place>) throws -> [String: JSONValue]? {
        assert(field.definition.kind.isAnyMapping, "\(field.name) is not a mapping of any values")
        guard let value = node(field) else { return nil }
        guard value.pairs != nil, case .object(let members) = try value.json() else {
            throw ConfigProblem(message: "\(value.path) must be a mapping")
        }
        return Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last })
    }

    /// Any value, nil when absent.
    func value(_ field: ConfigField<Place>) throws -> JSONValue? {
        assert(field.definition.kind.isAnyValue, "\(field.name) is not any value")
        return try node(field)?.json()
    }

    /// The mapping under a key, read as the keys of `Inner`; nil when absent. `shape`
    /// says what it must be in the error.
    func entry<Inner: ConfigPlace>(_ field: ConfigField<Place>, as inner: Inner.Type, shape: String) throws -> ConfigEntry<Inner>? {
        assert(field.definition.kind.nested?.id == Inner.section.id, "\(field.name) does not hold \(Inner.section.id)")
        guard let value = node(field) else { return nil }
        guard let entry = ConfigEntry<Inner>(value, log: log) else { throw ConfigProblem(message: "\(value.path) must be \(shape)") }
        return entry
    }

    /// The mappings under a mapping of names, in name order; nil when absent.
    func named<Inner: ConfigPlace>(_ field: ConfigField<Place>, as inner: Inner.Type, shape: String, each: String) throws -> [(name: String, entry: ConfigEntry<Inner>)]? {
        assert(field.definition.kind.nested?.id == Inner.section.id, "\(field.name) does not hold \(Inner.section.id)")
        guard let value = node(field) else { return nil }
        guard let pairs = value.pairs else { throw ConfigProblem(message: "\(value.path) must be \(shape)") }
        let byName = Dictionary(pairs.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last })
        return try byName.keys.sorted().map { name in
            guard let entry = ConfigEntry<Inner>(byName[name]!, log: log) else { throw ConfigProblem(message: "\(byName[name]!.path) must be \(each)") }
            return (name, entry)
        }
    }

    /// The mappings of a list, in order; nil when absent.
    func list<Inner: ConfigPlace>(_ field: ConfigField<Place>, as inner: Inner.Type, shape: String, each: String) throws -> [ConfigEntry<Inner>]? {
        assert(field.definition.kind.nested?.id == Inner.section.id, "\(field.name) does not hold \(Inner.section.id)")
        guard let value = node(field) else { return nil }
        guard let items = value.items else { throw ConfigProblem(message: "\(value.path) must be \(shape)") }
        return try items.map { item in
            guard let entry = ConfigEntry<Inner>(item, log: log) else { throw ConfigProblem(message: "\(item.path) must be \(each)") }
            return entry
        }
    }

    /// A mapping of keys to versions (requirements' platforms), in key order; nil when absent.
    func versions(_ field: ConfigField<Place>, shape: String) throws -> [(key: String, node: ConfigNode)]? {
        assert(field.definition.kind.isVersions, "\(field.name) is not a mapping of versions")
        guard let value = node(field) else { return nil }
        guard let pairs = value.pairs else { throw ConfigProblem(message: "\(value.path) must be \(shape)") }
        let byKey = Dictionary(pairs.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last })
        return byKey.keys.sorted().map { ($0, byKey[$0]!) }
    }
}

/// The keys the decoder looked up, each as `place.key` (`variant.requires`): a test loads
/// the reference's example and checks that every defined key is read somewhere, so no
/// key is documented and then ignored.
final class ConfigReadLog {
    private(set) var read: Set<String> = []

    func note(_ section: ConfigSection, _ name: String) {
        read.insert(section.id + "." + name)
    }
}
