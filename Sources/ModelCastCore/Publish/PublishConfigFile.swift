import Foundation
import ModelCastFormat
import Yams

/// A publish configuration file (`modelcast.yml`): the profile, the base URL and,
/// for multi-model catalogs, every model with its version, files and metadata.
/// Paths are relative to the file's directory. Flags given on the command line
/// override the file's values. Every key it may hold is defined in `ConfigSchema`;
/// docs/config.md, generated from those definitions, is the reference.
package struct PublishConfigFile: Sendable {
    package let profile: ManifestProfile?
    package let baseURL: String?
    package let target: String?
    package let manifestKey: String?
    package let manifestCacheControl: String?
    package let channel: String?
    package let minAppVersion: String?
    /// The model-signing key's path (`model_signing_key`), resolved like every path.
    package let modelSigningKey: String?
    package let meta: [String: JSONValue]
    package let models: [PublishRequest.Model]
    package let prototypes: PublishRequest.Model?

    /// Reads and checks the file at `path`; every error names the file and the key's path,
    /// with control characters escaped. The file is held to `ConfigFileBounds` (size,
    /// UTF-8, nesting, aliases) before it is parsed further, and every key problem is
    /// reported at once (`ConfigKeyCheck`) before any value is read.
    package static func load(path: String) throws -> PublishConfigFile {
        try load(path: path, log: nil)
    }

    /// The parser's resolver: the merge key is the only key YAML types here, as in Yams'
    /// decoder; plain scalars stay untyped, and `ConfigScalar` types the ones a key takes
    /// as any value.
    private static var resolver: Resolver { .basic.appending(.merge) }

    /// `load(path:)`, noting in `log` every key the decoder looks up.
    static func load(path: String, log: ConfigReadLog?) throws -> PublishConfigFile {
        let text = try ConfigFileBounds.read(path: path)
        try ConfigFileBounds.checkNesting(text, path: path)
        do {
            let root = try Parser(yaml: text, resolver: Self.resolver).singleRoot() ?? Node("")
            try ConfigFileBounds.checkExpanded(root, path: path)
            let document = ConfigNode(node: root, path: .top)
            try ConfigKeyCheck.check(document)
            return try PublishConfigFile(keys: ConfigFileKeys(document, log: log), directory: PathText.parent(path))
        } catch let problem as ConfigProblem {
            throw ModelCastError.usage(escapingControlCharacters("config \(path): \(problem.message)"))
        } catch let error as YamlError {
            throw ModelCastError.usage(escapingControlCharacters("config \(path) is not valid YAML: \(described(error))"))
        }
    }

    /// A parser error as one line: where, and what libyaml found. Yams' own text quotes the
    /// whole offending line (1 MiB of it, in a hostile file) on lines of its own.
    private static func described(_ error: YamlError) -> String {
        switch error {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _), .composer(let context, let problem, let mark, _):
            let during = context.map { " (\($0.text) at line \($0.mark.line), column \($0.mark.column))" } ?? ""
            return "line \(mark.line), column \(mark.column): \(problem)\(during)"
        case .reader(let problem, let offset, let value, _):
            return problem + (offset.map { " at byte \($0)" } ?? "") + (value >= 0 ? " (0x\(String(value, radix: 16, uppercase: true)))" : "")
        default:
            return "\(error)".split(separator: "\n").first.map(String.init) ?? "\(error)"
        }
    }

    /// The file's values with their meaning: a known profile, checked top-level values, paths
    /// relative to the file's `directory`.
    private init(keys: ConfigFileKeys, directory: String) throws {
        func resolve(_ file: String) -> String {
            file.hasPrefix("/") || directory.isEmpty ? file : directory + "/" + file
        }
        profile = try keys.profile.map { profile in
            guard let parsed = ManifestProfile(rawValue: profile) else {
                throw ConfigProblem(message: "unknown profile \(quotedValue(profile)) (known: \(ManifestProfile.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            return parsed
        }
        // Checked here by the rules the request applies, so the error names the file and the key.
        baseURL = try Self.checked(keys.baseURL, at: TopLevel.baseURL, URLParts.validateBaseURL)
        target = keys.to.map { TargetKind(of: $0) == .local ? resolve($0) : $0 }
        manifestKey = try Self.checked(keys.manifest, at: TopLevel.manifest) { try PublishRequest.validateManifestKey(Channels.split(manifestKey: $0).base) }
        manifestCacheControl = try Self.checked(keys.manifestCacheControl, at: TopLevel.manifestCacheControl, CachePolicy.validateManifest)
        channel = try Self.checked(keys.channel, at: TopLevel.channel, Channels.validate)
        minAppVersion = try Self.checked(keys.minAppVersion, at: TopLevel.minAppVersion, PublishRequest.validateMinAppVersion)
        modelSigningKey = keys.modelSigningKey.map(resolve)
        meta = keys.meta ?? [:]
        models = try keys.models.map { try Self.model($0, resolve: resolve) }
        prototypes = try keys.prototypes.map { try Self.model($0, resolve: resolve) }
    }

    /// `value` held to `rule`, whose error then names the key's path.
    private static func checked(_ value: String?, at field: ConfigField<TopLevel>, _ rule: (String) throws -> Void) throws -> String? {
        guard let value else { return nil }
        do {
            try rule(value)
        } catch {
            throw ConfigProblem(message: "\(ConfigPath.top.appending(field.name)): \(error)")
        }
        return value
    }

    private static func model(_ keys: ConfigFileKeys.ModelKeys, resolve: (String) -> String) throws -> PublishRequest.Model {
        do {
            try PublishRequest.validateName(keys.name)
        } catch {
            throw ConfigProblem(message: "\(keys.path): \(error)")
        }
        var model = PublishRequest.Model(name: keys.name, version: keys.version, files: keys.files.map(resolve), meta: keys.meta, layout: keys.layout ?? .zip)
        model.variants = keys.variants.map { variant in
            var unit = PublishRequest.Variant(name: variant.name, version: variant.version, files: variant.files.map(resolve), requires: variant.requires,
                                              meta: variant.meta, layout: variant.layout ?? .zip)
            unit.interfaceKinds = variant.interfaceKinds
            return unit
        }
        model.defaultVariant = keys.defaultVariant
        model.download = keys.download
        model.policies = keys.policies
        model.interfaceKinds = keys.interfaceKinds
        return model
    }
}
