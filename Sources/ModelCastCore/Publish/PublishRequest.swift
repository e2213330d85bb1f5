import Foundation

/// Everything a publish needs, gathered from flags and the config file.
package struct PublishRequest: Sendable {
    /// One model to publish: a name, a version, its files (the first is the model,
    /// then companions), and the metadata its profile writes.
    package struct Model: Sendable {
        package var name: String
        package var version: String
        package var files: [String]
        package var meta: [String: JSONValue]
        /// How a directory model is published: one zip (the default) or its files (`tree`).
        package var layout: ModelLayout
        /// The model's variants, in the order devices prefer them (empty: none). Each is
        /// published like a model of its own; `version` and `files` are then unused.
        package var variants: [Variant] = []
        /// The variant clients that do not know variants install; nil: the last one (the
        /// least demanding, in preference order).
        package var defaultVariant: String?
        /// When devices download the model; nil leaves it to the app.
        package var download: DownloadPolicy?
        /// Its licence, download conditions and stated storage (modelcast profile only);
        /// model-level: its variants share them, each with its own computed install size.
        package var policies = ModelPolicies()
        /// For a variant published as a unit of its own: the name its keys use
        /// (`NAME/variants/VARIANT`); nil: the model's name.
        package var storageName: String?
        /// The model's own classification of interface changes (`interface:` in the config
        /// file), over each facet's default; a variant's over its model's.
        package var interfaceKinds = InterfaceKinds()

        package init(name: String, version: String, files: [String], meta: [String: JSONValue] = [:], layout: ModelLayout = .zip) {
            self.name = name
            self.version = version
            self.files = files
            self.meta = meta
            self.layout = layout
        }

        /// The name the model's keys are made of.
        package var keyName: String { storageName ?? name }

        /// What is published with a version of its own: the model itself, or each of its
        /// variants as a model named `NAME@VARIANT` stored under `models/NAME/variants/VARIANT/`.
        package var units: [Model] {
            guard !variants.isEmpty else { return [self] }
            return variants.map { variant in
                var unit = Model(name: Self.unitLabel(model: name, variant: variant.name), version: variant.version, files: variant.files,
                                 meta: meta.merging(variant.meta) { _, own in own }, layout: variant.layout)
                unit.storageName = "\(name)/variants/\(variant.name)"
                unit.interfaceKinds = interfaceKinds.overridden(by: variant.interfaceKinds)
                return unit
            }
        }

        /// The variant clients that do not know variants install.
        package var defaultVariantName: String? { defaultVariant ?? variants.last?.name }

        static func unitLabel(model: String, variant: String) -> String { "\(model)@\(variant)" }
    }

    /// One variant of a model: its name, what a device needs to run it, its own version
    /// and files.
    package struct Variant: Sendable {
        package var name: String
        package var version: String
        package var files: [String]
        package var requires: VariantRequirements
        package var meta: [String: JSONValue]
        package var layout: ModelLayout
        /// The variant's own classification of interface changes, over its model's.
        package var interfaceKinds = InterfaceKinds()

        package init(name: String, version: String, files: [String], requires: VariantRequirements = VariantRequirements(),
                     meta: [String: JSONValue] = [:], layout: ModelLayout = .zip) {
            self.name = name
            self.version = version
            self.files = files
            self.requires = requires
            self.meta = meta
            self.layout = layout
        }
    }

    /// How a directory model is published.
    package enum ModelLayout: String, Sendable, CaseIterable {
        /// One deterministic zip of the directory.
        case zip
        /// Every regular file its own object under a content-addressed key
        /// (`models/NAME/blobs/SHA256`), shared by every version with the same bytes.
        case tree
    }

    /// The models, in the order given; their version texts may only be replaced by ones
    /// of the same precedence (`adoptingVersions`).
    package private(set) var models: [Model]
    /// The catalog profile's prototypes file, published beside the models.
    package let prototypes: Model?
    package let profile: ManifestProfile
    /// `https://host/prefix`: manifest URLs are this plus the object key.
    package let baseURL: String
    /// The manifest's key (its stable URL is base URL + key): the channel's
    /// (`channels/beta/manifest.json` for the target's `manifest.json`, `Channels`).
    package let manifestKey: String
    package let manifestCacheControl: String
    /// The channel published to; `manifestKey` is its manifest.
    package let channel: String
    package let minAppVersion: String?
    /// Release-wide metadata.
    package let meta: [String: JSONValue]
    package let compression: ZipCompression
    /// Reports packing and hashing progress; nil reports nothing.
    package let progress: ProgressFactory?
    /// How the release goes live (templates, dry run, time, signing, trust, adopt).
    package let goLive: GoLive
    /// What only a publish decides.
    package let options: Options

    /// The manifest's key when neither `--manifest-key` nor the config file names one.
    package static let defaultManifestKey = "manifest.json"
    /// The channel when neither `--channel` nor the config file names one.
    package static let defaultChannel = "stable"

    /// The settings only a publish has.
    package struct Options: Sendable {
        /// Models of the live manifest this release leaves out on purpose; dropping any
        /// other live model is refused.
        package var removeModels: [String] = []
        /// Publish with a base URL other than the live release's (refused otherwise).
        package var movesBaseURL = false
        /// The hosts the directory is deployed to (`--hosted-on`): their documented limits are
        /// checked for what this publish adds.
        package var hostedOn: Set<HostLimits.Host> = []
        /// Re-read every stored object the release names, also those the live release names
        /// with the same bytes (by default those are proven by the live record instead).
        package var reverifyStored = false
        /// Publish as a staged rollout (modelcast profile): this share of devices, in
        /// hundredths of a percent (`Rollout.parsePercent`), takes the release; the rest keep
        /// the live one. nil: every device takes it.
        package var rolloutPercent: Int?
        /// A staged rollout whose share follows a schedule (`Rollout.parseSchedule`:
        /// `1%,10%@24h,50%@72h,100%@7d`), evaluated by each device against its clock.
        package var rolloutSchedule: String?
        /// Which artifacts get a segment index (modelcast profile only), so devices
        /// holding an older version fetch only the segments that changed.
        package var segmentIndexes = SegmentIndexPolicy.auto
        /// A model's interface (inputs, outputs, classes, tokenizer…) may differ from the live
        /// version's: the change is intended, and `min_app_version` must go up.
        package var interfaceChange = false
        /// A model whose interface cannot be read may go live although an earlier version's
        /// could: nothing is compared for it (the next version is compared with the last
        /// interface recorded).
        package var allowUnreadableInterface = false
        /// Sign each model version with an OpenSSF model signature (`--model-signing-key`).
        package var modelSigning: ModelSigningSettings?
        /// Publish models without model signatures although the live ones have them.
        package var unsignedModels = false

        package init() {}
    }

    /// Which artifacts get a segment index.
    package enum SegmentIndexPolicy: String, Sendable, CaseIterable {
        /// Files of at least 8 MiB: smaller ones cost a device little to fetch whole.
        case auto
        case always
        case never

        /// Smallest artifact `auto` indexes.
        package static let autoThreshold: Int64 = 8 << 20

        /// True when an artifact of about `size` bytes of `profile` gets an index.
        package func applies(size: Int64, profile: ManifestProfile) -> Bool {
            guard profile.writesSegmentIndexes else { return false }
            switch self {
            case .auto: return size >= Self.autoThreshold
            case .always: return true
            case .never: return false
            }
        }
    }

    package var templatesDirectory: String? { goLive.templatesDirectory }
    package var dryRun: Bool { goLive.dryRun }
    package var publishedAt: Date { goLive.publishedAt }
    package var publishedAtOrigin: String? { goLive.publishedAtOrigin }
    package var signing: SigningSettings? { goLive.signing }
    package var allowUnsigned: Bool { goLive.allowUnsigned }
    package var trustStored: Bool { goLive.trustStored }
    package var adoptLive: Bool { goLive.adoptLive }
    package var removeModels: [String] { options.removeModels }
    package var movesBaseURL: Bool { options.movesBaseURL }
    package var hostedOn: Set<HostLimits.Host> { options.hostedOn }
    package var reverifyStored: Bool { options.reverifyStored }
    package var rolloutPercent: Int? { options.rolloutPercent }
    package var rolloutSchedule: String? { options.rolloutSchedule }

    /// A checked request: every value that does not need the target is checked here,
    /// naming the bad one, and none changes afterwards.
    package init(
        models: [Model], prototypes: Model? = nil, profile: ManifestProfile = .modelcast, baseURL: String,
        manifestKey: String = defaultManifestKey, manifestCacheControl: String = CachePolicy.manifestDefault,
        channel: String = defaultChannel, minAppVersion: String? = nil, meta: [String: JSONValue] = [:],
        compression: ZipCompression = .store, progress: ProgressFactory? = nil, goLive: GoLive = GoLive(), options: Options = Options()
    ) throws {
        self.models = models
        self.prototypes = prototypes
        self.profile = profile
        self.baseURL = baseURL
        // `manifestKey` names the target's manifest; a channel other than stable lives beside it.
        self.manifestKey = manifestKey.hasPrefix(Channels.folder) ? manifestKey : Channels.manifestKey(channel: channel, base: manifestKey)
        self.manifestCacheControl = manifestCacheControl
        self.channel = channel
        self.minAppVersion = minAppVersion
        self.meta = meta
        self.compression = compression
        self.progress = progress
        self.goLive = goLive
        self.options = options
        try validate()
        try validateProfileFields()
    }

    /// The same request with some models' version texts replaced by `texts` (model name →
    /// text), each of the same precedence as the one given (a live release's spelling).
    package func adoptingVersions(_ texts: [String: String]) -> PublishRequest {
        var adopted = self
        for index in adopted.models.indices {
            if let text = texts[adopted.models[index].name] { adopted.models[index].version = text }
            for v in adopted.models[index].variants.indices {
                if let text = texts[Model.unitLabel(model: adopted.models[index].name, variant: adopted.models[index].variants[v].name)] {
                    adopted.models[index].variants[v].version = text
                }
            }
        }
        return adopted
    }

    /// Checks every value that does not need the target, naming the bad one.
    private func validate() throws {
        try URLParts.validateBaseURL(baseURL)
        try CachePolicy.validateManifest(manifestCacheControl)
        try Channels.validate(channel)
        let (keyChannel, base) = Channels.split(manifestKey: manifestKey)
        try Self.validateManifestKey(base)
        guard keyChannel == channel else {
            throw ModelCastError.usage("manifest key \(quotedValue(manifestKey)) is channel \(keyChannel)'s, not channel \(channel)'s")
        }
        guard !models.isEmpty else { throw ModelCastError.usage("nothing to publish: give at least one MODEL or a config file with models") }
        var names = Set<String>()
        for model in models + (prototypes.map { [$0] } ?? []) {
            try Self.validateName(model.name)
            guard names.insert(model.name).inserted else { throw ModelCastError.usage("model \(model.name) is given twice") }
            try validate(model)
            try validatePolicies(of: model)
        }
        if let minAppVersion {
            do { try Self.validateMinAppVersion(minAppVersion) } catch { throw ModelCastError.usage("--min-app-version \(error)") }
        }
        try RolloutRules.validateStart(percent: rolloutPercent, schedule: rolloutSchedule, profile: profile, at: publishedAt)
        if prototypes != nil && !profile.writesPrototypes {
            throw ModelCastError.usage("prototypes are written only by the catalog and modelcast profiles, not \(profile.rawValue)")
        }
    }

    /// A licence, download conditions or a stated storage: written only by a profile whose
    /// manifest has the keys (elsewhere they would be dropped, and devices never gated),
    /// and each whole (checked before anything is packed).
    private func validatePolicies(of model: Model) throws {
        guard !model.policies.isEmpty else { return }
        guard profile.carriesModelPolicies else { throw ModelCastError.usage(ManifestProfile.policiesRefusal(profile: profile, model: model.name)) }
        _ = try model.policies.licence(model: model.name)
        _ = try model.policies.conditions(model: model.name)
    }

    private func validate(_ model: Model) throws {
        guard model.variants.isEmpty else { return try validateVariants(of: model) }
        // try?: refused just below, naming the value and the rule.
        guard (try? ModelVersion(model.version)) != nil else {
            throw ModelCastError.usage("version \(quotedValue(model.version)) of model \(model.name) is not a semantic version (MAJOR.MINOR.PATCH, e.g. 1.2.0; at most 128 characters)")
        }
        guard !model.files.isEmpty else { throw ModelCastError.usage("model \(model.name) has no files") }
        if model.layout == .tree {
            guard profile.publishesTrees else { throw ModelCastError.usage(ManifestProfile.treeRefusal(profile: profile, model: model.name)) }
            guard model.files.count == 1 else {
                throw ModelCastError.usage("model \(model.name) is published as a tree (--no-zip), which is one directory, but it has \(model.files.count) paths: \(model.files.joined(separator: ", "))")
            }
        }
    }

    /// A model with variants: written only by the profiles that know them, each variant
    /// a valid unit of its own with a unique name, the default one of them.
    private func validateVariants(of model: Model) throws {
        guard profile.writesVariants else {
            throw ModelCastError.usage("model \(model.name) has variants, which only the modelcast profile (and tiers, whose tiers they become) writes, not \(profile.rawValue)")
        }
        guard model.variants.count <= 32 else { throw ModelCastError.usage("model \(model.name) has \(model.variants.count) variants; at most 32") }
        var names = Set<String>()
        for variant in model.variants {
            // try?: refused just below, naming the value and the rule.
            guard (try? ModelName(variant.name)) != nil else {
                throw ModelCastError.usage("variant name \(quotedValue(variant.name)) of model \(model.name) may use only letters, digits, '.', '_' and '-', at most 128 (it becomes part of every URL)")
            }
            guard names.insert(variant.name.lowercased()).inserted else {
                throw ModelCastError.usage("model \(model.name) has two variants named \(variant.name)")
            }
        }
        if let name = model.defaultVariant, !model.variants.contains(where: { $0.name == name }) {
            throw ModelCastError.usage("default_variant \(quotedValue(name)) of model \(model.name) is not one of its variants (\(model.variants.map(\.name).joined(separator: ", ")))")
        }
        try validateDefaultVariant(of: model)
        for unit in model.units {
            let variant = String(unit.name.split(separator: "@").last!)
            // try?: refused just below, naming the value and the rule.
            guard (try? ModelVersion(unit.version)) != nil else {
                throw ModelCastError.usage("version \(quotedValue(unit.version)) of variant \(variant) of model \(model.name) is not a semantic version (MAJOR.MINOR.PATCH, e.g. 1.2.0; at most 128 characters)")
            }
            guard !unit.files.isEmpty else { throw ModelCastError.usage("variant \(variant) of model \(model.name) has no files") }
            if unit.layout == .tree {
                guard profile.publishesTrees else { throw ModelCastError.usage(ManifestProfile.treeRefusal(profile: profile, model: model.name)) }
                guard unit.files.count == 1 else {
                    throw ModelCastError.usage("variant \(variant) of model \(model.name) is published as a tree, which is one directory, but it has \(unit.files.count) paths")
                }
            }
        }
    }

    /// A profile that names a default variant (modelcast) writes its version and files at the
    /// model's top level, for clients that predate variants (or read only `version` and
    /// `files`): they install it on every device, whatever its requirements. When every
    /// variant has requirements the default must be chosen on purpose (`--default-variant`),
    /// not fall to the last one. A profile that writes no default (tiers) names each variant.
    private func validateDefaultVariant(of model: Model) throws {
        guard profile.namesDefaultVariant, model.defaultVariant == nil, let last = model.variants.last,
              model.variants.allSatisfy({ !$0.requires.jsonObject().isEmpty }) else { return }
        throw ModelCastError.usage("model \(model.name): every variant has requirements, so the default one — \(last.name), the last — would be installed by clients that predate variants on every device, whatever it has (\(last.name) requires \(last.requires.jsonObject().keys.sorted().joined(separator: ", "))). Add a variant without requirements last (one every device runs), or choose the one they install with --default-variant VARIANT (default_variant in a config file)")
    }

    /// Fails early (before packing) when a profile field is missing.
    private func validateProfileFields() throws {
        var releaseModels: [String: ReleaseModel] = [:]
        for model in models {
            let placeholder = ReleaseFile(name: "", key: "", url: "", sha256: "", size: 0, contentType: "")
            var entry = ReleaseModel(version: model.version, files: model.files.map { _ in placeholder }, meta: model.meta)
            if !model.variants.isEmpty {
                let variants = model.variants.map { variant in
                    ReleaseVariant(name: variant.name, requires: variant.requires.jsonObject(),
                                   model: ReleaseModel(version: variant.version, files: variant.files.map { _ in placeholder },
                                                       meta: model.meta.merging(variant.meta) { _, own in own }))
                }
                let own = variants.first { $0.name == model.defaultVariantName }!
                entry = own.model
                entry.variant = own.name
                entry.variants = variants
            }
            releaseModels[model.name] = entry
        }
        let release = Release(
            sequence: 0, publishedAt: "", channel: channel, profile: profile.rawValue, minAppVersion: minAppVersion, meta: meta,
            models: releaseModels, prototypes: prototypes.map { ReleaseModel(version: $0.version, files: [], meta: $0.meta) })
        try profile.validate(release)
    }

    /// A manifest key: a `.json` key outside the folders modelcast manages.
    package static func validateManifestKey(_ manifestKey: String) throws {
        try validateKey(manifestKey)
        // It names a file on a directory target and is printed by every command.
        guard !manifestKey.unicodeScalars.contains(where: ManifestText.isHidden) else {
            throw ModelCastError.usage("manifest key \(quotedValue(manifestKey)) holds a control or invisible character")
        }
        guard manifestKey.hasSuffix(".json"), !manifestKey.hasPrefix("models/"), !manifestKey.hasPrefix("manifests/"), !manifestKey.hasPrefix("_"),
              !manifestKey.hasPrefix(Channels.folder) else {
            throw ModelCastError.usage("manifest key \(quotedValue(manifestKey)) must end in .json and not live under models/, manifests/, channels/ or _modelcast/ (a channel's manifest is chosen with --channel)")
        }
    }

    /// The lowest app version a release needs: one the profiles' clients can compare.
    static func validateMinAppVersion(_ version: String) throws {
        // try?: a value that does not parse is refused just below, naming it.
        guard (try? AppVersion(version)) == nil else { return }
        throw ModelCastError.usage("\(quotedValue(version)) is not an app version: one to four numbers separated by dots, e.g. 5.2, 1.4.0 or 1.0.0.123")
    }

    /// Model names become key and URL segments: letters, digits, `.`, `_`, `-`.
    static func validateName(_ name: String) throws {
        // try?: refused just below, naming the value and the rule.
        guard (try? ModelName(name)) != nil else {
            throw ModelCastError.usage("model name \(quotedValue(name)) may use only letters, digits, '.', '_' and '-', at most 128 (it becomes part of every URL)")
        }
    }

    /// An absolute http(s) URL with a host and no query or fragment.
    package static func validateBaseURL(_ url: String) throws { try URLParts.validateBaseURL(url) }
}
