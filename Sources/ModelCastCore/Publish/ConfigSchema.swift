import Foundation
import ModelCastFormat

/// Every key a publish config file (`modelcast.yml`) may hold, in one place: its name,
/// type, default, an example and what it does, grouped by where it goes. The decoder
/// reads keys only through these definitions (`ConfigEntry` takes a `ConfigField` of the
/// entry's own place), the unknown-key check knows only these, and docs/config.md is
/// generated from them (`ConfigReference`), so the three cannot disagree.
enum ConfigSchema {
    /// The places a key can be, outermost first (the order of docs/config.md).
    static let sections: [ConfigSection] = [TopLevel.section, ModelPlace.section, VariantPlace.section, RequiresPlace.section, InterfacePlace.section,
                                            LicencePlace.section, DownloadPlace.section, StoragePlace.section, PrototypesPlace.section]

    /// A file that uses every place and most keys (docs/config.md shows it; a test loads
    /// it, and loads it again with each key's example put in).
    static let example = """
        profile: modelcast
        base_url: https://cdn.example.com/models
        to: site
        channel: stable
        min_app_version: "2.0.0"
        model_signing_key: keys/model-signing.pem
        meta: {pipeline: nightly}
        models:
          classifier:
            version: 1.2.0
            files: [Classifier.mlpackage]
            layout: tree
            download: essential
            meta: {num_classes: 150, labels: [cat, dog]}
          llm:
            version: 2.1.0
            download: {policy: prefetch, network: unmetered, charging: required}
            licence: {spdx: Llama-3.2-Community, url: "https://example.com/LICENSE.txt", acceptance: required}
            storage: {install_size: 7GB, priority: 10}
            meta: {context_length: 4096}
            interface: {compatible: [tokenizer], breaking: [chat_template]}
            variants:
              - name: 3b
                files: [llm-3b-q4.gguf, llm-3b-mmproj.gguf]
                requires:
                  min_memory: 6GiB
                  platforms: {ios: "17.0", macos: "14.0"}
                  architectures: [arm64]
              - name: ane
                version: 2.1.1
                file: LLM.mlpackage
                layout: zip
                meta: {runtime: coreml}
                requires: {accelerators: [neural-engine], capabilities: [metal3]}
              - name: 1b
                files: [llm-1b-q4.gguf]
                interface: {compatible: [vocabulary]}
            default_variant: 1b
        prototypes:
          version: 2.1.0
          file: prototypes/v2.1.0.json
          classes: 150

        """
}

/// The keys at the top of the file.
enum TopLevel: ConfigPlace {
    static let profile = ConfigField<Self>("profile", .choice(of: ManifestProfile.self), default: .value(ManifestProfile.modelcast.rawValue),
                                           example: "catalog", "The manifest's shape: modelcast's own, or one an app already reads ([manifest.md](manifest.md)). `--profile` overrides it.")
    static let baseURL = ConfigField<Self>("base_url", .text, default: .required("unless `--base-url` or `$MODELCAST_BASE_URL` gives it"),
                                           example: "https://cdn.example.com/models", "The public URL the target is served from; manifests name every file under it.")
    static let to = ConfigField<Self>("to", .text, default: .required("unless `--to` or `$MODELCAST_TARGET` gives it"),
                                      example: "s3://my-bucket/models", "Where to publish: a directory (relative to this file) or `s3://bucket/prefix`.")
    static let manifest = ConfigField<Self>("manifest", .text, default: .value(PublishRequest.defaultManifestKey),
                                            example: "models.json", "The manifest's key in the target (`--manifest-key`).")
    static let manifestCacheControl = ConfigField<Self>("manifest_cache_control", .text, default: .value(CachePolicy.manifestDefault),
                                                        example: "\"no-cache, max-age=60\"", "The manifest's Cache-Control (`--manifest-cache-control`); never long-lived ([hosting.md](hosting.md)).")
    static let channel = ConfigField<Self>("channel", .text, default: .value(PublishRequest.defaultChannel),
                                           example: "beta", "The release channel (`--channel`); channels other than stable sit under `channels/NAME/`.")
    static let minAppVersion = ConfigField<Self>("min_app_version", .text, default: .otherwise("no minimum"),
                                                 example: "\"2.0.0\"", "The lowest app version the release needs (`--min-app-version`): the profile's min_app_version or minAppVersion.")
    static let modelSigningKey = ConfigField<Self>("model_signing_key", .path, default: .otherwise("models are not signed"),
                                                   example: "keys/model-signing.pem", "The P-256 private key (PEM) that signs each model version with an OpenSSF model signature ([model-signing.md](model-signing.md)); the path, never the key.")
    static let meta = ConfigField<Self>("meta", .anyMapping, default: .otherwise("none"),
                                        example: "{pipeline: nightly, build: 4211}", "Release-wide metadata, any values, kept with the release.")
    static let models = ConfigField<Self>("models", .named(ModelPlace.section), default: .otherwise("the MODEL arguments"),
                                          example: "{classifier: {version: 1.2.0, files: [Classifier.mlpackage]}}", "The models to publish, by name, each with its own version and files (below).")
    static let prototypes = ConfigField<Self>("prototypes", .section(PrototypesPlace.section), default: .otherwise("none (`--prototypes FILE`)"),
                                              example: "{version: 2.1.0, file: prototypes.json, classes: 150}", "The catalog profile's prototypes file (below).")

    static let section = ConfigSection(
        id: "top", title: "Top level", place: "the top level",
        summary: "What the release is and where it goes. Command-line flags override each of these.",
        fields: [profile, baseURL, to, manifest, manifestCacheControl, channel, minAppVersion, modelSigningKey, meta, models, prototypes].map(\.definition))
}

/// The keys of one model (`models.NAME`).
enum ModelPlace: ConfigPlace {
    static let version = ConfigField<Self>("version", .text, default: .required("unless every variant gives its own"),
                                           example: "1.2.0", "The model's version (semantic version); with variants, each variant's unless it gives its own.")
    static let files = ConfigField<Self>("files", .paths, default: .required("unless `file` or `variants` gives them"),
                                         example: "[llm.gguf, llm-mmproj.gguf]", "The model's files or directories, relative to this file: the first is the model, the rest its companions.")
    static let file = ConfigField<Self>("file", .paths, default: .otherwise("none"),
                                        example: "classifier.tflite", "Another spelling of `files`, for one file; both may be given (`files` first).")
    static let layout = ConfigField<Self>("layout", .choice(of: PublishRequest.ModelLayout.self), default: .value(PublishRequest.ModelLayout.zip.rawValue),
                                          example: "tree", "How a directory is published: one deterministic zip, or its files one by one (`--no-zip`; modelcast profile only).")
    static let download = ConfigField<Self>("download", .choiceOrSection(DownloadPolicy.allCases.map(\.rawValue), DownloadPlace.section), default: .otherwise("the app decides"),
                                            example: "prefetch", "When devices download the model: before first use, in the background after launch, or when the app asks (`--download`); a mapping adds conditions (below).")
    static let meta = ConfigField<Self>("meta", .anyMapping, default: .otherwise("none"),
                                        example: "{minAppVersion: \"2.0.0\", features: [classification]}", "The fields the profile writes for this model (`--meta MODEL:KEY=VALUE`), any values; YAML's types are kept (a quoted value is text).")
    static let variants = ConfigField<Self>("variants", .list(VariantPlace.section), default: .otherwise("none: one set of files for every device"),
                                            example: "[{name: 3b, files: [m-3b.gguf], requires: {min_memory: 6GiB}}, {name: 1b, files: [m-1b.gguf]}]",
                                            "The model's variants, most preferred first (below); a device takes the first whose requirements it meets. Then the model has no `files` of its own.")
    static let defaultVariant = ConfigField<Self>("default_variant", .text, default: .otherwise("the last variant"),
                                                  example: "1b", "The variant clients that predate variants install (`--default-variant`); required when every variant has requirements.")
    static let interface = ConfigField<Self>("interface", .section(InterfacePlace.section), default: .otherwise("each facet's default kind"),
                                             example: "{compatible: [tokenizer], breaking: [chat_template]}", InterfacePlace.summary)

    static let section = ConfigSection(
        id: "model", title: "A model", place: "models.NAME",
        summary: "One model of `models`, under its name (the name devices look it up by). Either `files` (or `file`), or `variants`.",
        fields: [version, files, file, layout, download, meta, variants, defaultVariant, licence, storage, interface].map(\.definition))
}

/// The keys of one variant (`models.NAME.variants[i]`).
enum VariantPlace: ConfigPlace {
    static let name = ConfigField<Self>("name", .text, default: .required(nil), example: "3b", "The variant's name, unique within the model.")
    static let version = ConfigField<Self>("version", .text, default: .otherwise("the model's `version`"), example: "2.1.1", "The variant's own version.")
    static let files = ConfigField<Self>("files", .paths, default: .required("unless `file` gives them"), example: "[m-3b-q4.gguf]", "The variant's files or directories, relative to this file.")
    static let file = ConfigField<Self>("file", .paths, default: .otherwise("none"), example: "Model.mlpackage", "Another spelling of `files`, for one file.")
    static let requires = ConfigField<Self>("requires", .section(RequiresPlace.section), default: .otherwise("none: every device"),
                                            example: "{min_memory: 6GiB, platforms: {ios: \"17.0\"}}", "What a device needs to take this variant (below).")
    static let meta = ConfigField<Self>("meta", .anyMapping, default: .otherwise("the model's `meta`"), example: "{quantization: q4_k_m}", "Fields for this variant, merged over the model's (its own win).")
    static let layout = ConfigField<Self>("layout", .choice(of: PublishRequest.ModelLayout.self), default: .otherwise("the model's `layout`"),
                                          example: "tree", "How this variant's directory is published.")
    static let interface = ConfigField<Self>("interface", .section(InterfacePlace.section), default: .otherwise("the model's `interface`"),
                                             example: "{compatible: [vocabulary]}", "The variant's own kinds of interface change, each facet's over the model's.")

    static let section = ConfigSection(
        id: "variant", title: "A variant", place: "models.NAME.variants[i]",
        summary: "One item of a model's `variants` list (modelcast and tiers profiles).",
        fields: [name, version, files, file, requires, meta, layout, interface].map(\.definition))
}

/// The keys of a variant's requirements (`models.NAME.variants[i].requires`).
enum RequiresPlace: ConfigPlace {
    static let minMemory = ConfigField<Self>("min_memory", .memory, default: .otherwise("any"), example: "6GiB", "The device's physical memory at least: bytes, or with a unit (GB = 10^9, GiB = 2^30).")
    static let platforms = ConfigField<Self>("platforms", .versions(keys: DevicePlatform.allCases.map(\.rawValue)), default: .otherwise("any"),
                                             example: "{ios: \"17.0\", macos: \"14.0\"}", "The platforms the variant runs on, each with its lowest OS version (\"0\": any version).")
    static let accelerators = ConfigField<Self>("accelerators", .names(among: Accelerator.allCases.map(\.rawValue)), default: .otherwise("none needed"),
                                                example: "[neural-engine]", "Accelerators the device must have.")
    static let architectures = ConfigField<Self>("architectures", .names(among: nil), default: .otherwise("any"), example: "[arm64]", "CPU architectures the variant runs on (the device's must be one).")
    static let capabilities = ConfigField<Self>("capabilities", .names(among: nil), default: .otherwise("none needed"), example: "[metal3]", "Capabilities the app must declare (free-form names), all of them.")

    static let section = ConfigSection(
        id: "requires", title: "Requirements", place: "models.NAME.variants[i].requires",
        summary: "What a device needs to take a variant; every requirement is optional, and all given must hold.",
        fields: [minMemory, platforms, accelerators, architectures, capabilities].map(\.definition))
}

/// The keys of a model's (or variant's) classification of interface changes
/// (`models.NAME.interface`): which facets (`InterfaceFacet`) are breaking and which
/// compatible for this model, over their defaults (docs/interface-contract.md).
enum InterfacePlace: ConfigPlace {
    static let summary = "Which interface changes break this model's apps, by facet, over the defaults ([interface-contract.md](interface-contract.md#breaking-and-compatible-changes)): "
        + "a breaking change needs `--interface-change` and a higher `--min-app-version`, a compatible one publishes with a note."
    static let compatible = ConfigField<Self>("compatible", .names(among: InterfaceFacet.allCases.map(\.rawValue)), default: .otherwise("the facets compatible by default"),
                                              example: "[tokenizer, chat_template]", "Facets whose changes publish without flags, noted in the report.")
    static let breaking = ConfigField<Self>("breaking", .names(among: InterfaceFacet.allCases.map(\.rawValue)), default: .otherwise("the facets breaking by default"),
                                            example: "[chat_template]", "Facets whose changes are refused unless `--interface-change`; a facet cannot be in both lists.")

    static let section = ConfigSection(
        id: "interface", title: "Interface changes", place: "models.NAME.interface",
        summary: summary + " Also a key of a variant (`models.NAME.variants[i].interface`), whose facets override the model's.",
        fields: [compatible, breaking].map(\.definition))
}

/// The keys of the catalog profile's prototypes file (`prototypes`).
enum PrototypesPlace: ConfigPlace {
    static let version = ConfigField<Self>("version", .text, default: .required(nil), example: "2.1.0", "The prototypes' version (`--prototypes-version`).")
    static let file = ConfigField<Self>("file", .paths, default: .required("unless `files` gives it"), example: "prototypes/v2.1.0.json", "The prototypes file (JSON), relative to this file.")
    static let files = ConfigField<Self>("files", .paths, default: .otherwise("none"), example: "[prototypes/v2.1.0.json]", "Another spelling of `file`.")
    static let classes = ConfigField<Self>("classes", .anyValue, default: .otherwise("none"), example: "150", "The number of classes, written as the catalog's `prototypes.classes` (`--prototypes-classes`).")
    static let meta = ConfigField<Self>("meta", .anyMapping, default: .otherwise("none"), example: "{source: clustering-v3}", "Other fields for the prototypes entry, any values.")

    static let section = ConfigSection(
        id: "prototypes", title: "Prototypes", place: "prototypes",
        summary: "The catalog profile's prototypes file, stored beside the models as an immutable artifact.",
        fields: [version, file, files, classes, meta].map(\.definition))
}
