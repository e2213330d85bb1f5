import Foundation
import Yams

/// A publish configuration file (`modelcast.yml`): the profile, the base URL and,
/// for multi-model catalogs, every model with its version, files and metadata.
/// Paths are relative to the file's directory. Flags given on the command line
/// override the file's values.
///
/// ```yaml
/// profile: catalog
/// base_url: https://cdn.example.com
/// min_app_version: "2.0.0"
/// models:
///   pe-core-s16-384:
///     version: 1.2.0
///     files: [pe-core-s16-384.mlpackage]
///     layout: zip                 # or tree: the directory's files, one object each
///     meta:
///       minAppVersion: "2.0.0"
///       features: [classification, embedding]
///       hardware: {neuralEngine: true, gpu: true, cpu: true}
/// prototypes:
///   version: 2.1.0
///   file: prototypes/v2.1.0.json
///   classes: 150
/// ```
package struct PublishConfigFile: Sendable {
    package var profile: ManifestProfile?
    package var baseURL: String?
    package var target: String?
    package var manifestKey: String?
    package var manifestCacheControl: String?
    package var channel: String?
    package var minAppVersion: String?
    package var meta: [String: JSONValue] = [:]
    package var models: [PublishRequest.Model] = []
    package var prototypes: PublishRequest.Model?

    static let topLevelKeys: Set<String> = [
        "profile", "base_url", "to", "manifest", "manifest_cache_control", "channel", "min_app_version", "meta", "models", "prototypes",
    ]

    /// Reads and checks the file at `path`; every error names the file and the key.
    package static func load(path: String) throws -> PublishConfigFile {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ModelCastError.notFound(path: path)
        }
        let text = String(decoding: data, as: UTF8.self)
        let root: Any?
        do { root = try Yams.load(yaml: text, .default, Self.constructor) } catch {
            throw ModelCastError.usage("config \(path) is not valid YAML: \(error)")
        }
        guard let top = root as? [String: Any] else {
            throw ModelCastError.usage("config \(path) must be a mapping of keys (profile, base_url, models, …)")
        }
        func fail(_ message: String) -> ModelCastError { .usage("config \(path): \(message)") }
        // Every unknown key at once, each with the closest known one: one run shows them all.
        var unknown = top.keys.filter { !topLevelKeys.contains($0) }.sorted().map { Spelling.quoted($0, among: topLevelKeys.sorted()) }
        for (section, fileKeys) in [("models", ["files", "file"])] {
            guard let models = top[section] as? [String: Any] else { continue }
            let known = ["version", "meta", "layout"] + fileKeys
            for name in models.keys.sorted() {
                guard let entry = models[name] as? [String: Any] else { continue }
                unknown += entry.keys.filter { !known.contains($0) }.sorted().map { "'\(section).\(name).\($0)'" + (Spelling.suggestion(for: $0, among: known).map { " (did you mean '\($0)'?)" } ?? "") }
            }
        }
        guard unknown.isEmpty else {
            throw fail("unknown key\(unknown.count == 1 ? "" : "s") \(unknown.joined(separator: ", ")) (known at the top: \(topLevelKeys.sorted().joined(separator: ", ")); in a model: version, files, meta, layout)")
        }
        let base = PathText.parent(path)
        func resolve(_ file: String) -> String {
            file.hasPrefix("/") || base.isEmpty ? file : base + "/" + file
        }
        func string(_ key: String, in dictionary: [String: Any], at location: String) throws -> String? {
            guard let value = dictionary[key] else { return nil }
            if let s = value as? String { return s }
            // An unquoted number where a string belongs (a version): the text as written.
            if let number = value as? YAMLNumber { return number.text }
            throw fail("\(location)\(key) must be a string")
        }

        var config = PublishConfigFile()
        if let profile = try string("profile", in: top, at: "") {
            guard let parsed = ManifestProfile(rawValue: profile) else {
                throw fail("unknown profile '\(profile)' (known: \(ManifestProfile.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            config.profile = parsed
        }
        config.baseURL = try string("base_url", in: top, at: "")
        config.target = try string("to", in: top, at: "").map { TargetKind(of: $0) == .local ? resolve($0) : $0 }
        config.manifestKey = try string("manifest", in: top, at: "")
        config.manifestCacheControl = try string("manifest_cache_control", in: top, at: "")
        config.channel = try string("channel", in: top, at: "")
        config.minAppVersion = try string("min_app_version", in: top, at: "")
        if let meta = top["meta"] {
            guard case .object(let members) = try jsonValue(meta, at: "meta", fail: fail) else { throw fail("meta must be a mapping") }
            for member in members { config.meta[member.key] = member.value }
        }
        if let models = top["models"] {
            guard let dictionary = models as? [String: Any] else {
                throw fail("models must be a mapping of model name to {version, files, meta}")
            }
            for name in dictionary.keys.sorted() {
                guard let entry = dictionary[name] as? [String: Any] else {
                    throw fail("models.\(name) must be a mapping with version and files")
                }
                config.models.append(try model(name: name, entry: entry, at: "models.\(name).", fileKeys: ["files", "file"]))
            }
        }
        if let prototypes = top["prototypes"] {
            guard let entry = prototypes as? [String: Any] else { throw fail("prototypes must be a mapping with version and file") }
            var model = try model(name: "prototypes", entry: entry.filter { $0.key != "classes" }, at: "prototypes.", fileKeys: ["file", "files"])
            if let classes = entry["classes"] { model.meta["classes"] = try jsonValue(classes, at: "prototypes.classes", fail: fail) }
            config.prototypes = model
        }
        return config

        func model(name: String, entry: [String: Any], at location: String, fileKeys: [String]) throws -> PublishRequest.Model {
            let known = Set(["version", "meta"] + fileKeys + (name == "prototypes" ? [] : ["layout"]))
            if let unknown = entry.keys.filter({ !known.contains($0) }).sorted().first {
                throw fail("unknown key '\(location)\(unknown)' (known: \(known.sorted().joined(separator: ", ")))")
            }
            guard let version = try string("version", in: entry, at: location) else { throw fail("\(location)version is missing") }
            var files: [String] = []
            for key in fileKeys {
                if let one = entry[key] as? String { files.append(one) }
                if let many = entry[key] as? [Any] {
                    for item in many {
                        guard let file = item as? String ?? (item as? YAMLNumber)?.text else { throw fail("\(location)\(key) must list file paths") }
                        files.append(file)
                    }
                }
            }
            guard !files.isEmpty else { throw fail("\(location)files is missing") }
            var meta: [String: JSONValue] = [:]
            if let raw = entry["meta"] {
                guard case .object(let members) = try jsonValue(raw, at: "\(location)meta", fail: fail) else {
                    throw fail("\(location)meta must be a mapping")
                }
                for member in members { meta[member.key] = member.value }
            }
            var layout = PublishRequest.ModelLayout.zip
            if let raw = try string("layout", in: entry, at: location) {
                guard let value = PublishRequest.ModelLayout(rawValue: raw) else {
                    throw fail("\(location)layout '\(raw)' is not one of \(PublishRequest.ModelLayout.allCases.map(\.rawValue).joined(separator: ", ")) (tree publishes a directory's files one by one)")
                }
                layout = value
            }
            return PublishRequest.Model(name: name, version: version, files: files.map(resolve), meta: meta, layout: layout)
        }
    }

    /// Yams' constructor, with integers and floats kept with the text they were written
    /// as: `min_app_version: 2.10` is "2.10", not the number 2.1.
    static var constructor: Constructor {
        var scalars = Constructor.defaultScalarMap
        scalars[.int] = { scalar in Int64.construct(from: scalar).map { YAMLNumber(text: scalar.string, json: .int($0)) } }
        scalars[.float] = { scalar in Double.construct(from: scalar).map { YAMLNumber(text: scalar.string, json: .double($0)) } }
        return Constructor(scalars)
    }

    /// Converts a YAML value (as Yams loads it) to JSON.
    static func jsonValue(_ value: Any, at location: String, fail: (String) -> ModelCastError) throws -> JSONValue {
        switch value {
        case let b as Bool: return .bool(b)
        case let number as YAMLNumber: return number.json
        case let i as Int: return .int(Int64(i))
        case let d as Double: return .double(d)
        case let s as String: return .string(s)
        case let a as [Any]: return .array(try a.enumerated().map { try jsonValue($0.element, at: "\(location)[\($0.offset)]", fail: fail) })
        case let m as [String: Any]:
            return .object(try m.keys.sorted().map { .init($0, try jsonValue(m[$0]!, at: "\(location).\($0)", fail: fail)) })
        case is NSNull: return .null
        default:
            if let date = value as? Date {
                // YAML reads 2026-03-27 as a date; keep the text the user wrote.
                let formatter = DateFormatter()
                formatter.dateFormat = "yyyy-MM-dd"
                formatter.timeZone = TimeZone(identifier: "UTC")
                return .string(formatter.string(from: date))
            }
            throw fail("\(location) has an unsupported value \(value)")
        }
    }
}

/// A number in a config file, with the text it was written as: a string where the
/// key wants one (a version), a JSON number where a value is free (meta).
struct YAMLNumber {
    let text: String
    let json: JSONValue
}
