import Foundation
import ModelCastFormat
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
/// model_signing_key: keys/model-signing.pem   # optional: OpenSSF model signatures
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

    /// Reads and checks the file at `path`; every error names the file and the key. The
    /// file is held to `ConfigFileBounds` (size, nesting, aliases) before it is decoded.
    package static func load(path: String) throws -> PublishConfigFile {
        let text = try ConfigFileBounds.read(path: path)
        try ConfigFileBounds.checkNesting(text, path: path)
        do {
            if let document = try Yams.compose(yaml: text) { try ConfigFileBounds.checkExpanded(document, path: path) }
            return try PublishConfigFile(keys: YAMLDecoder().decode(ConfigFileKeys.self, from: text), directory: PathText.parent(path))
        } catch let problem as ConfigProblem {
            throw ModelCastError.usage("config \(path): \(problem.message)")
        } catch let DecodingError.dataCorrupted(context) {
            // The decoder hands on what the keys' own checks threw as the underlying error.
            if let problem = context.underlyingError as? ConfigProblem { throw ModelCastError.usage("config \(path): \(problem.message)") }
            throw ModelCastError.usage("config \(path) is not valid YAML: \(context.underlyingError.map { "\($0)" } ?? context.debugDescription)")
        } catch let error as YamlError {
            throw ModelCastError.usage("config \(path) is not valid YAML: \(error)")
        }
    }

    /// The file's values with their meaning: a known profile, a known layout, paths
    /// relative to the file's `directory`.
    private init(keys: ConfigFileKeys, directory: String) throws {
        func resolve(_ file: String) -> String {
            file.hasPrefix("/") || directory.isEmpty ? file : directory + "/" + file
        }
        profile = try keys.profile.map { profile in
            guard let parsed = ManifestProfile(rawValue: profile) else {
                throw ConfigProblem(message: "unknown profile '\(profile)' (known: \(ManifestProfile.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            return parsed
        }
        baseURL = keys.baseURL
        target = keys.to.map { TargetKind(of: $0) == .local ? resolve($0) : $0 }
        manifestKey = keys.manifest
        manifestCacheControl = keys.manifestCacheControl
        channel = keys.channel
        minAppVersion = keys.minAppVersion
        modelSigningKey = keys.modelSigningKey.map(resolve)
        meta = keys.meta ?? [:]
        models = try keys.models.map { try Self.model($0, location: "models.\($0.name).", resolve: resolve) }
        prototypes = try keys.prototypes.map { try Self.model($0, location: "prototypes.", resolve: resolve) }
    }

    private static func model(_ keys: ConfigFileKeys.ModelKeys, location: String, resolve: (String) -> String) throws -> PublishRequest.Model {
        var model = PublishRequest.Model(name: keys.name, version: keys.version, files: keys.files.map(resolve), meta: keys.meta,
                                         layout: try layout(keys.layout, location: location))
        model.variants = try keys.variants.enumerated().map { index, variant in
            PublishRequest.Variant(name: variant.name, version: variant.version, files: variant.files.map(resolve), requires: variant.requires,
                                   meta: variant.meta, layout: try layout(variant.layout, location: "\(location)variants[\(index)]."))
        }
        model.defaultVariant = keys.defaultVariant
        model.download = try keys.download.map { raw in
            guard let policy = DownloadPolicy(rawValue: raw) else {
                throw ConfigProblem(message: "\(location)download '\(raw)' is not one of \(DownloadPolicy.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return policy
        }
        return model
    }

    private static func layout(_ raw: String?, location: String) throws -> PublishRequest.ModelLayout {
        guard let raw else { return .zip }
        guard let value = PublishRequest.ModelLayout(rawValue: raw) else {
            throw ConfigProblem(message: "\(location)layout '\(raw)' is not one of \(PublishRequest.ModelLayout.allCases.map(\.rawValue).joined(separator: ", ")) (tree publishes a directory's files one by one)")
        }
        return value
    }
}
