import Foundation
import ModelCastFormat

/// What a publish config file says, key by key, each scalar as written (the shapes are
/// checked here; `PublishConfigFile` gives the values their meaning). Every unknown key,
/// at the top and in every model, is reported in one error before anything else.
struct ConfigFileKeys: Decodable {
    static let topLevel = [
        "profile", "base_url", "to", "manifest", "manifest_cache_control", "channel", "min_app_version", "meta", "models", "prototypes",
        "model_signing_key",
    ]
    static let inModel = ["version", "meta", "layout", "files", "file", "variants", "default_variant", "download"]
    static let inVariant = ["name", "version", "meta", "layout", "files", "file", "requires"]
    static let inPrototypes = ["version", "meta", "file", "files", "classes"]

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
        let version: String
        let files: [String]
        let meta: [String: JSONValue]
        let layout: String?
        var variants: [VariantKeys] = []
        var defaultVariant: String?
        var download: String?
    }

    /// One variant's keys (`models.NAME.variants[i]`).
    struct VariantKeys {
        let name: String
        let version: String
        let files: [String]
        let meta: [String: JSONValue]
        let layout: String?
        let requires: VariantRequirements
    }

    init(from decoder: Decoder) throws {
        guard let top = try? decoder.container(keyedBy: ConfigKey.self) else {
            throw ConfigProblem(message: "the file must be a mapping of keys (profile, base_url, models, …)")
        }
        try Self.refuseUnknownKeys(top)
        profile = try top.text("profile")
        baseURL = try top.text("base_url")
        to = try top.text("to")
        manifest = try top.text("manifest")
        manifestCacheControl = try top.text("manifest_cache_control")
        channel = try top.text("channel")
        minAppVersion = try top.text("min_app_version")
        modelSigningKey = try top.text("model_signing_key")
        meta = try top.members("meta")
        let shape = "a mapping of model name to {version, files, meta}"
        if let models = try top.mapping("models", shape: shape) {
            self.models = try models.allKeys.map(\.stringValue).sorted().compactMap { name in
                try models.mapping(name, shape: "a mapping with version and files").map { try Self.model(name, in: $0) }
            }
        } else {
            models = []
        }
        prototypes = try top.mapping("prototypes", shape: "a mapping with version and file").map { entry in
            try Self.model("prototypes", in: entry)
        }
    }

    /// Every unknown key of the file at once, each with the closest known one.
    private static func refuseUnknownKeys(_ top: KeyedDecodingContainer<ConfigKey>) throws {
        var unknown = top.unknownKeys(known: topLevel.sorted())
        if let models = try? top.nestedContainer(keyedBy: ConfigKey.self, forKey: ConfigKey("models")) {
            for name in models.allKeys.map(\.stringValue).sorted() {
                guard let entry = try? models.nestedContainer(keyedBy: ConfigKey.self, forKey: ConfigKey(name)) else { continue }
                unknown += entry.unknownKeys(known: inModel)
            }
        }
        if let prototypes = try? top.nestedContainer(keyedBy: ConfigKey.self, forKey: ConfigKey("prototypes")) {
            unknown += prototypes.unknownKeys(known: inPrototypes)
        }
        guard unknown.isEmpty else {
            throw ConfigProblem(message: "unknown key\(unknown.count == 1 ? "" : "s") \(unknown.joined(separator: ", ")) (known at the top: \(topLevel.sorted().joined(separator: ", ")); in a model: version, files, meta, layout, download, variants, default_variant; in prototypes: version, file, meta, classes)")
        }
    }

    /// A model's keys; the prototypes section's `classes` joins its meta.
    private static func model(_ name: String, in entry: KeyedDecodingContainer<ConfigKey>) throws -> ModelKeys {
        if entry.contains(ConfigKey("variants")) { return try modelWithVariants(name, in: entry) }
        guard let version = try entry.text("version") else { throw ConfigProblem(message: "\(entry.path("version")) is missing") }
        let files = try (entry.paths("files") ?? []) + (entry.paths("file") ?? [])
        guard !files.isEmpty else { throw ConfigProblem(message: "\(entry.path("files")) is missing") }
        var meta = try entry.members("meta") ?? [:]
        if name == "prototypes", entry.contains(ConfigKey("classes")) {
            meta["classes"] = try entry.decode(ConfigValue.self, forKey: ConfigKey("classes")).json
        }
        var keys = ModelKeys(name: name, version: version, files: files, meta: meta, layout: try entry.text("layout"))
        keys.download = try entry.text("download")
        return keys
    }

    /// A model given as its variants: a list of mappings, each with a name, files and
    /// requirements; the model's `version`, `meta` and `layout` are each variant's default.
    private static func modelWithVariants(_ name: String, in entry: KeyedDecodingContainer<ConfigKey>) throws -> ModelKeys {
        for key in ["files", "file"] where entry.contains(ConfigKey(key)) {
            throw ConfigProblem(message: "\(entry.path(key)): a model with variants lists its files in each variant")
        }
        let shape = "a list of variants, each a mapping with name, files and requires"
        guard var list = try? entry.nestedUnkeyedContainer(forKey: ConfigKey("variants")) else {
            throw ConfigProblem(message: "\(entry.path("variants")) must be \(shape)")
        }
        let version = try entry.text("version")
        let meta = try entry.members("meta") ?? [:]
        let layout = try entry.text("layout")
        var variants: [VariantKeys] = []
        while !list.isAtEnd {
            let at = "\(entry.path("variants"))[\(variants.count)]"
            guard let item = try? list.nestedContainer(keyedBy: ConfigKey.self) else { throw ConfigProblem(message: "\(at) must be a mapping with name, files and requires") }
            let unknown = item.allKeys.map(\.stringValue).filter { !inVariant.contains($0) }.sorted()
            guard unknown.isEmpty else {
                throw ConfigProblem(message: "\(at): unknown key\(unknown.count == 1 ? "" : "s") \(unknown.joined(separator: ", ")) (known in a variant: \(inVariant.joined(separator: ", ")))")
            }
            guard let variantName = try item.text("name") else { throw ConfigProblem(message: "\(at).name is missing") }
            guard let variantVersion = try item.text("version") ?? version else {
                throw ConfigProblem(message: "\(at).version is missing (or give the model a version all its variants share)")
            }
            let files = try (item.paths("files") ?? []) + (item.paths("file") ?? [])
            guard !files.isEmpty else { throw ConfigProblem(message: "\(at).files is missing") }
            variants.append(VariantKeys(name: variantName, version: variantVersion, files: files,
                                        meta: meta.merging(try item.members("meta") ?? [:]) { _, own in own },
                                        layout: try item.text("layout") ?? layout, requires: try item.requirements("requires")))
        }
        guard !variants.isEmpty else { throw ConfigProblem(message: "\(entry.path("variants")) is empty") }
        var keys = ModelKeys(name: name, version: version ?? variants.last!.version, files: [], meta: meta, layout: layout)
        keys.variants = variants
        keys.defaultVariant = try entry.text("default_variant")
        keys.download = try entry.text("download")
        return keys
    }
}
