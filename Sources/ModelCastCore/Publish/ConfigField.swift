import Foundation

/// A place in a config file that holds a fixed set of keys (the top level, a model, a
/// variant, …): its keys are the `ConfigField`s its `section` lists.
protocol ConfigPlace {
    static var section: ConfigSection { get }
}

/// One key of a config file at one place: the decoder reads a key only through its
/// field, and a `ConfigEntry<Place>` takes only fields of its own `Place`, so no code can
/// read a key the definitions do not list there.
struct ConfigField<Place: ConfigPlace>: Sendable {
    let definition: ConfigKeyDefinition

    init(_ name: String, _ kind: ConfigKind, default defaultValue: ConfigDefault, example: String, _ summary: String) {
        definition = ConfigKeyDefinition(name: name, kind: kind, defaultValue: defaultValue, example: example, summary: summary)
    }

    var name: String { definition.name }
}

/// What a key is, for the reference and the checks.
struct ConfigKeyDefinition: Sendable {
    let name: String
    let kind: ConfigKind
    let defaultValue: ConfigDefault
    /// The value of an example, as YAML (a flow mapping or list for a section).
    let example: String
    /// What the key does, one sentence or two (Markdown).
    let summary: String
}

/// The type of a key's value.
indirect enum ConfigKind: Sendable {
    /// Text: any scalar but a bare null or a bool, kept exactly as written (`2.10` stays "2.10").
    case text
    /// One file path, relative to the config file.
    case path
    /// A path or a list of paths, relative to the config file.
    case paths
    /// One of these words.
    case choice([String])
    /// An amount of memory: bytes, or a number with a unit.
    case memory
    /// A byte count 0…2^53: bytes, or a number with a unit.
    case bytes
    /// A name or a list of names, from `among` when given.
    case names(among: [String]?)
    /// A mapping of each of `keys` to a version.
    case versions(keys: [String])
    /// Any value: YAML's types are kept (a quoted scalar is text).
    case anyValue
    /// A mapping of any keys to any values.
    case anyMapping
    /// A mapping with the keys of `section`.
    case section(ConfigSection)
    /// A mapping of names, each to a mapping with the keys of `section`.
    case named(ConfigSection)
    /// A list of mappings, each with the keys of `section`.
    case list(ConfigSection)
    /// One of these words, or a mapping with the keys of `section` (which says more).
    case choiceOrSection([String], ConfigSection)

    /// One of the raw values of `Value`: the type the decoder reads the key as
    /// (`ConfigEntry.choice`) names the words, so they are listed once.
    static func choice<Value: RawRepresentable & CaseIterable>(of _: Value.Type) -> ConfigKind where Value.RawValue == String {
        .choice(Value.allCases.map(\.rawValue))
    }

    /// The section a mapping of this kind is checked against, if it has fixed keys.
    var nested: ConfigSection? {
        switch self {
        case .section(let section), .named(let section), .list(let section), .choiceOrSection(_, let section): return section
        default: return nil
        }
    }
}

/// What a key means when the file leaves it out.
enum ConfigDefault: Sendable {
    /// This value.
    case value(String)
    /// No value; the text says what then holds (Markdown: "the app decides").
    case otherwise(String)
    /// It must be given; the text, if any, says when it need not be.
    case required(String?)
}

/// The keys one place of a config file may hold.
struct ConfigSection: Sendable {
    /// A short name for the read log (`model`).
    let id: String
    /// The heading in the reference (`A model`).
    let title: String
    /// The place as errors write it (`models.NAME`, `the top level`).
    let place: String
    /// What the place is for (Markdown).
    let summary: String
    let fields: [ConfigKeyDefinition]

    /// The names of its keys, in order.
    var names: [String] { fields.map(\.name) }

    /// The definition of `name` here, if it is a key of this place.
    func field(named name: String) -> ConfigKeyDefinition? {
        fields.first { $0.name == name }
    }
}

extension ConfigKind {
    /// A kind read as one text.
    var isScalarText: Bool {
        switch self {
        case .text, .path, .choice, .memory, .bytes: return true
        default: return false
        }
    }

    /// A kind read as one text or a list of them.
    var isTextList: Bool {
        switch self {
        case .paths, .names: return true
        default: return false
        }
    }

    var isAnyMapping: Bool {
        if case .anyMapping = self { return true }
        return false
    }

    var isAnyValue: Bool {
        if case .anyValue = self { return true }
        return false
    }

    var isVersions: Bool {
        if case .versions = self { return true }
        return false
    }
}
