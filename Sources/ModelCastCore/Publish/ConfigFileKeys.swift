import Foundation
import ModelCastFormat

/// What a publish config file says, key by key, each scalar as written but the keys that
/// take one of a few words, read as their type (the shapes are checked here;
/// `PublishConfigFile` gives the other values their meaning). Every key is read
/// through its definition in `ConfigSchema`, after `ConfigKeyCheck` has refused every
/// unknown key of the file in one error.
struct ConfigFileKeys {
    let profile: String?
    let baseURL: String?
    let to: String?
    let manifest: String?
    let manifestCacheControl: String?
    let channel: String?
    let minAppVersion: String?
    /// The path of the P-256 private key that signs the models (never the key itself).
    let modelSigningKey: String?
    let meta: [String: JSONValue]?
    /// In name order.
    let models: [ModelKeys]
    let prototypes: ModelKeys?

    /// One model's keys (or the prototypes section's).
    struct ModelKeys {
        let name: String
        /// Where the model is in the file (`models.llm`), for errors about its values.
        let path: ConfigPath
        let version: String
        let files: [String]
        let meta: [String: JSONValue]
        let layout: PublishRequest.ModelLayout?
        var variants: [VariantKeys] = []
        var defaultVariant: String?
        var download: DownloadPolicy?
        /// Its licence, download conditions and stated storage.
        var policies = ModelPolicies()
        var interfaceKinds = InterfaceKinds()
    }

    /// One variant's keys (`models.NAME.variants[i]`).
    struct VariantKeys {
        let name: String
        let version: String
        let files: [String]
        let meta: [String: JSONValue]
        let layout: PublishRequest.ModelLayout?
        let requires: VariantRequirements
        var interfaceKinds = InterfaceKinds()
    }

    /// Reads the document under `root`, whose keys `ConfigKeyCheck` has accepted.
    init(_ root: ConfigNode, log: ConfigReadLog? = nil) throws {
        guard let top = ConfigEntry<TopLevel>(root, log: log) else {
            throw ConfigProblem(message: "the file must be a mapping of keys (profile, base_url, models, …)")
        }
        profile = try top.text(TopLevel.profile)
        baseURL = try top.text(TopLevel.baseURL)
        to = try top.text(TopLevel.to)
        manifest = try top.text(TopLevel.manifest)
        manifestCacheControl = try top.text(TopLevel.manifestCacheControl)
        channel = try top.text(TopLevel.channel)
        minAppVersion = try top.text(TopLevel.minAppVersion)
        modelSigningKey = try top.text(TopLevel.modelSigningKey)
        meta = try top.members(TopLevel.meta)
        models = try top.named(TopLevel.models, as: ModelPlace.self, shape: "a mapping of model name to {version, files, meta}",
                               each: "a mapping with version and files")?.map { try Self.model($0.name, in: $0.entry) } ?? []
        prototypes = try top.entry(TopLevel.prototypes, as: PrototypesPlace.self, shape: "a mapping with version and file").map(Self.prototypes)
    }

    /// A model's keys.
    private static func model(_ name: String, in entry: ConfigEntry<ModelPlace>) throws -> ModelKeys {
        if entry.contains(ModelPlace.variants) { return try modelWithVariants(name, in: entry) }
        guard let version = try entry.text(ModelPlace.version) else { throw ConfigProblem(message: "\(entry.path(ModelPlace.version)) is missing") }
        let files = try entry.requiredPaths(ModelPlace.files, or: ModelPlace.file)
        let meta = try entry.members(ModelPlace.meta) ?? [:]
        var keys = ModelKeys(name: name, path: entry.path, version: version, files: files, meta: meta, layout: try entry.choice(ModelPlace.layout, as: PublishRequest.ModelLayout.self))
        (keys.download, keys.policies) = try policies(in: entry)
        keys.interfaceKinds = try Self.interfaceKinds(entry.entry(ModelPlace.interface, as: InterfacePlace.self, shape: InterfacePlace.shape))
        return keys
    }

    /// The kinds an `interface:` mapping gives, none when absent.
    private static func interfaceKinds(_ entry: ConfigEntry<InterfacePlace>?) throws -> InterfaceKinds {
        try entry?.interfaceKinds() ?? InterfaceKinds()
    }

    /// The prototypes section: `classes` joins its meta.
    private static func prototypes(_ entry: ConfigEntry<PrototypesPlace>) throws -> ModelKeys {
        guard let version = try entry.text(PrototypesPlace.version) else { throw ConfigProblem(message: "\(entry.path(PrototypesPlace.version)) is missing") }
        let files = try entry.requiredPaths(PrototypesPlace.file, or: PrototypesPlace.files)
        var meta = try entry.members(PrototypesPlace.meta) ?? [:]
        if let classes = try entry.value(PrototypesPlace.classes) { meta["classes"] = classes }
        return ModelKeys(name: "prototypes", path: entry.path, version: version, files: files, meta: meta, layout: nil)
    }

    /// A model given as its variants: a list of mappings, each with a name, files and
    /// requirements; the model's `version`, `meta` and `layout` are each variant's default.
    private static func modelWithVariants(_ name: String, in entry: ConfigEntry<ModelPlace>) throws -> ModelKeys {
        for field in [ModelPlace.files, ModelPlace.file] where entry.contains(field) {
            throw ConfigProblem(message: "\(entry.path(field)): a model with variants lists its files in each variant")
        }
        let items = try entry.list(ModelPlace.variants, as: VariantPlace.self, shape: "a list of variants, each a mapping with name, files and requires",
                                   each: "a mapping with name, files and requires") ?? []
        let version = try entry.text(ModelPlace.version)
        let meta = try entry.members(ModelPlace.meta) ?? [:]
        let layout = try entry.choice(ModelPlace.layout, as: PublishRequest.ModelLayout.self)
        let variants = try items.map { item in
            guard let variantName = try item.text(VariantPlace.name) else { throw ConfigProblem(message: "\(item.path(VariantPlace.name)) is missing") }
            guard let variantVersion = try item.text(VariantPlace.version) ?? version else {
                throw ConfigProblem(message: "\(item.path(VariantPlace.version)) is missing (or give the model a version all its variants share)")
            }
            let files = try item.requiredPaths(VariantPlace.files, or: VariantPlace.file)
            var keys = VariantKeys(name: variantName, version: variantVersion, files: files,
                                   meta: meta.merging(try item.members(VariantPlace.meta) ?? [:]) { _, own in own },
                                   layout: try item.choice(VariantPlace.layout, as: PublishRequest.ModelLayout.self) ?? layout,
                                   requires: try item.entry(VariantPlace.requires, as: RequiresPlace.self, shape: RequiresPlace.shape)?.requirements() ?? VariantRequirements())
            keys.interfaceKinds = try Self.interfaceKinds(item.entry(VariantPlace.interface, as: InterfacePlace.self, shape: InterfacePlace.shape))
            return keys
        }
        guard let last = variants.last else { throw ConfigProblem(message: "\(entry.path(ModelPlace.variants)) is empty") }
        var keys = ModelKeys(name: name, path: entry.path, version: version ?? last.version, files: [], meta: meta, layout: layout)
        keys.variants = variants
        keys.defaultVariant = try entry.text(ModelPlace.defaultVariant)
        (keys.download, keys.policies) = try policies(in: entry)
        keys.interfaceKinds = try Self.interfaceKinds(entry.entry(ModelPlace.interface, as: InterfacePlace.self, shape: InterfacePlace.shape))
        return keys
    }
}
