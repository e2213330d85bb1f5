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

        package init(name: String, version: String, files: [String], meta: [String: JSONValue] = [:], layout: ModelLayout = .zip) {
            self.name = name
            self.version = version
            self.files = files
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

    package var models: [Model]
    /// The catalog profile's prototypes file, published beside the models.
    package var prototypes: Model?
    package var profile: ManifestProfile
    /// `https://host/prefix`: manifest URLs are this plus the object key.
    package var baseURL: String
    /// The manifest's key (its stable URL is base URL + key): the channel's
    /// (`channels/beta/manifest.json` for the target's `manifest.json`, `Channels`).
    package var manifestKey: String
    package var manifestCacheControl: String
    /// The channel published to; `manifestKey` is its manifest.
    package var channel: String
    package var minAppVersion: String?
    /// Release-wide metadata.
    package var meta: [String: JSONValue]
    package var compression: ZipCompression
    /// A directory whose `*.mustache` files replace or extend the built-in templates.
    package var templatesDirectory: String?
    /// Compute and print everything, write nothing.
    package var dryRun: Bool
    /// The publish time written as `published_at`.
    package var publishedAt: Date
    /// Reports packing and hashing progress; nil reports nothing.
    package var progress: ProgressFactory?
    /// Signing key, expiry and inline signature; nil publishes unsigned with no expiry.
    package var signing: SigningSettings?
    /// Replace a signed live manifest with an unsigned one (refused otherwise).
    package var allowUnsigned = false
    /// Models of the live manifest this release leaves out on purpose; dropping any
    /// other live model is refused.
    package var removeModels: [String] = []
    /// Continue from a live manifest that no history record explains (refused otherwise).
    package var adoptLive = false
    /// Publish with a base URL other than the live release's (refused otherwise).
    package var movesBaseURL = false
    /// The hosts the directory is deployed to (`--hosted-on`): their documented limits are
    /// checked for what this publish adds.
    package var hostedOn: Set<HostLimits.Host> = []
    /// Accept a stored object's size where the store cannot prove its SHA-256 itself.
    package var trustStored = false
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
    /// Where `publishedAt` came from when it is not the current time (`SOURCE_DATE_EPOCH=…`), for messages.
    package var publishedAtOrigin: String?

    package init(
        models: [Model], prototypes: Model? = nil, profile: ManifestProfile = .modelcast, baseURL: String,
        manifestKey: String = "manifest.json", manifestCacheControl: String = CachePolicy.manifestDefault,
        channel: String = "stable", minAppVersion: String? = nil, meta: [String: JSONValue] = [:],
        compression: ZipCompression = .store, templatesDirectory: String? = nil, dryRun: Bool = false,
        publishedAt: Date = Date(), progress: ProgressFactory? = nil, signing: SigningSettings? = nil
    ) {
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
        self.templatesDirectory = templatesDirectory
        self.dryRun = dryRun
        self.publishedAt = publishedAt
        self.progress = progress
        self.signing = signing
    }

    /// Checks every value that does not need the target, naming the bad one.
    package func validate() throws {
        try URLParts.validateBaseURL(baseURL)
        try CachePolicy.validateManifest(manifestCacheControl)
        try Channels.validate(channel)
        let (keyChannel, base) = Channels.split(manifestKey: manifestKey)
        try Self.validateManifestKey(base)
        guard keyChannel == channel else {
            throw ModelCastError.usage("manifest key '\(manifestKey)' is channel \(keyChannel)'s, not channel \(channel)'s")
        }
        guard !models.isEmpty else { throw ModelCastError.usage("nothing to publish: give at least one MODEL or a config file with models") }
        var names = Set<String>()
        for model in models + (prototypes.map { [$0] } ?? []) {
            try Self.validateName(model.name)
            guard names.insert(model.name).inserted else { throw ModelCastError.usage("model \(model.name) is given twice") }
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
        if let minAppVersion, (try? AppVersion(minAppVersion)) == nil {
            throw ModelCastError.usage("--min-app-version \(quotedValue(minAppVersion)) is not an app version: one to four numbers separated by dots, e.g. 5.2, 1.4.0 or 1.0.0.123")
        }
        try RolloutRules.validateStart(percent: rolloutPercent, schedule: rolloutSchedule, profile: profile, at: publishedAt)
        if prototypes != nil && !profile.writesPrototypes {
            throw ModelCastError.usage("prototypes are written only by the catalog and modelcast profiles, not \(profile.rawValue)")
        }
    }

    /// Model names become key and URL segments: letters, digits, `.`, `_`, `-`.
    /// A manifest key: a `.json` key outside the folders modelcast manages.
    package static func validateManifestKey(_ manifestKey: String) throws {
        try validateKey(manifestKey)
        guard manifestKey.hasSuffix(".json"), !manifestKey.hasPrefix("models/"), !manifestKey.hasPrefix("manifests/"), !manifestKey.hasPrefix("_"),
              !manifestKey.hasPrefix(Channels.folder) else {
            throw ModelCastError.usage("manifest key '\(manifestKey)' must end in .json and not live under models/, manifests/, channels/ or _modelcast/ (a channel's manifest is chosen with --channel)")
        }
    }

    static func validateName(_ name: String) throws {
        guard (try? ModelName(name)) != nil else {
            throw ModelCastError.usage("model name \(quotedValue(name)) may use only letters, digits, '.', '_' and '-', at most 128 (it becomes part of every URL)")
        }
    }

    /// An absolute http(s) URL with a host and no query or fragment.
    package static func validateBaseURL(_ url: String) throws { try URLParts.validateBaseURL(url) }
}
