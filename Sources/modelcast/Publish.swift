import ArgumentParser
import Foundation
import ModelCastCore

extension HostLimits.Host: ExpressibleByArgument {}

extension ManifestProfile: ExpressibleByArgument {}
extension PublishRequest.SegmentIndexPolicy: ExpressibleByArgument {}

extension ModelCast {
    struct Publish: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Pack models, store them under immutable keys, and write the manifest last.",
            discussion: """
                Needs --version, --to and --base-url, or a --config file that gives them.
                More options: modelcast publish --help-hidden
                Details: docs/cli.md#publish
                """
        )

        // Each MODEL is packed as `modelcast pack` does; plain paths are the files of one model.
        @Argument(help: ArgumentHelp("Model files or directories; NAME=PATH assigns a file to model NAME.", valueName: "MODEL"))
        var models: [String] = []

        @OptionGroup(title: "Release")
        var release: PublishReleaseOptions

        @OptionGroup(title: "Variants and interface", visibility: .hidden)
        var variantOptions: VariantOptions

        @OptionGroup(title: "Licence, download conditions and storage", visibility: .hidden)
        var policyOptions: ModelPolicyOptions

        @OptionGroup(title: "Staged rollout")
        var rolloutOptions: RolloutStartOptions

        /// What every command that makes a release live shares (signing, --verify-url,
        /// --dry-run, --trust-stored): declared once, in GoLiveOptions.
        @OptionGroup
        var goLive: GoLiveOptions

        @OptionGroup(title: "Signing")
        var modelSigning: ModelSigningOptions

        @OptionGroup(title: "Packing and hosting")
        var hosting: PublishHostingOptions

        @OptionGroup(title: "S3 targets")
        var targetOptions: TargetOptions

        @Flag(help: "Print a JSON summary instead of text.")
        var json = false

        @OptionGroup
        var progressOptions: ProgressOptions

        func run() async throws {
            Interrupts.shared.setMessage(InterruptMessage.publish)
            let environment = ProcessInfo.processInfo.environment
            var commandLine = PublishCommandLine()
            commandLine.models = models
            commandLine.name = release.name
            commandLine.version = release.version
            commandLine.profile = release.profile
            commandLine.baseURL = release.baseURL ?? environment["MODELCAST_BASE_URL"]
            commandLine.target = release.to ?? environment["MODELCAST_TARGET"]
            commandLine.configPath = release.config
            commandLine.meta = release.meta
            commandLine.minAppVersion = release.minAppVersion
            commandLine.channel = release.channel
            commandLine.manifestKey = hosting.manifestKey
            commandLine.manifestCacheControl = hosting.manifestCacheControl
            commandLine.compression = hosting.compression
            commandLine.noZip = hosting.noZip
            variantOptions.apply(to: &commandLine)
            policyOptions.apply(to: &commandLine)
            commandLine.prototypesPath = release.prototypes
            commandLine.prototypesVersion = release.prototypesVersion
            commandLine.prototypesClasses = release.prototypesClasses
            (commandLine.options.rolloutPercent, commandLine.options.rolloutSchedule) = try rolloutOptions.parsed()
            commandLine.options.removeModels = release.removeModel
            commandLine.options.movesBaseURL = release.moveBaseURL
            commandLine.options.hostedOn = Set(hosting.hostedOn)
            commandLine.options.reverifyStored = release.reverifyStored
            commandLine.options.segmentIndexes = hosting.segmentIndex
            commandLine.modelSigning = modelSigning.source(environment: environment)
            let display = progressOptions.display(json: json)
            commandLine.progress = display.factory
            commandLine.goLive = try goLive.value(environment: environment, templates: hosting.templates, adoptLive: release.adoptLive)
            let (target, request) = try commandLine.makeRequest()
            let gate = try verifyGate(goLive.verifyURL, manifestKey: request.manifestKey)
            var settings = targetOptions.settings(for: target)
            settings.progress = display.factory
            let report = try await withStorage(settings, environment: environment, log: display.log) { [request] storage in
                try await Publisher(storage: storage, log: display.log, beforeManifest: gate?(storage)).publish(request)
            }
            try printPublishReport(report, json: json, done: "published", wouldDo: "would publish")
        }
    }
}

/// publish's own options: what is released, and where to.
struct PublishReleaseOptions: ParsableArguments {
    @Option(help: "Version of the models (semantic version, e.g. 1.2.0).")
    var version: String?

    @Option(help: ArgumentHelp("Target DIR or s3://bucket/prefix ($MODELCAST_TARGET).", valueName: "DIR|S3URL"))
    var to: String?

    @Option(help: ArgumentHelp("Public base URL of the target ($MODELCAST_BASE_URL).", valueName: "URL"))
    var baseURL: String?

    @Option(help: "Name of the model (default: the first file's name).")
    var name: String?

    // Any NAME but stable is published at channels/NAME/<manifest key>, with its own history
    // and sequence, sharing the artifacts; version rules apply per channel.
    @Option(help: ArgumentHelp("Release channel (default: stable).", valueName: "NAME"))
    var channel: String?

    @Option(help: ArgumentHelp("Configuration file (YAML): models, versions, metadata.", valueName: "FILE"))
    var config: String?

    @Option(help: "Manifest shape (default: modelcast or the config's).")
    var profile: ManifestProfile?

    @Option(help: ArgumentHelp("A profile field, for all models or MODEL (repeatable).", valueName: "[MODEL:]KEY=VALUE"))
    var meta: [String] = []

    // tiers min_app_version, catalog minAppVersion, modelcast min_app_version.
    @Option(help: "Minimum app version the models need.")
    var minAppVersion: String?

    @Option(help: ArgumentHelp("A live model this release leaves out on purpose (repeatable; refused otherwise).", valueName: "NAME", visibility: .hidden))
    var removeModel: [String] = []

    // Stored as an immutable artifact; its version and class count come from the file's
    // "version" and "classes" unless given.
    @Option(help: ArgumentHelp("The catalog's prototypes file (JSON), stored beside the models.", valueName: "FILE", visibility: .hidden))
    var prototypes: String?

    @Option(help: ArgumentHelp("Version of the prototypes (default: the file's \"version\").", valueName: "VERSION", visibility: .hidden))
    var prototypesVersion: String?

    @Option(help: ArgumentHelp("Number of prototype classes (default: the length of the file's \"classes\").", valueName: "N", visibility: .hidden))
    var prototypesClasses: Int?

    @Flag(help: SafetyHelp.adoptLive)
    var adoptLive = false

    // Devices then fetch new files from the new URL, while the rollback objects and cached
    // manifests stay at the old one.
    @Flag(help: ArgumentHelp("Publish with a --base-url other than the live release's (refused otherwise).", visibility: .hidden))
    var moveBaseURL = false

    // By default the files the live release names with the same bytes are proven by its
    // history record (checked against the store), not one by one.
    @Flag(help: ArgumentHelp("Re-read every stored object the release names, not only what its history leaves unproven.", visibility: .hidden))
    var reverifyStored = false
}

/// publish's options for how the artifacts are packed and hosted.
struct PublishHostingOptions: ParsableArguments {
    @Flag(name: .customLong("no-zip"), help: "Publish directories as trees: one object per file.")
    var noZip = false

    // pages: Cloudflare Pages, 25 MiB per file and 100 _headers rules; wrangler: 300 MiB per file.
    @Option(help: ArgumentHelp("Warn when the release crosses this host's limits (repeatable).", valueName: "HOST"))
    var hostedOn: [HostLimits.Host] = []

    @Option(help: ArgumentHelp("Zip entry compression for directory models.", visibility: .hidden))
    var compression: ZipCompression = .store

    @Option(help: ArgumentHelp("Artifacts with a segment index (auto: 8 MiB or more).", valueName: "auto|always|never", visibility: .hidden))
    var segmentIndex: PublishRequest.SegmentIndexPolicy = .auto

    @Option(help: ArgumentHelp("Key of the manifest in the target (default: manifest.json).", visibility: .hidden))
    var manifestKey: String?

    @Option(help: ArgumentHelp("Cache-Control of the manifest (default: 'no-cache, no-store').", visibility: .hidden))
    var manifestCacheControl: String?

    @Option(help: ArgumentHelp("Directory of *.mustache files overriding the built-in templates.", valueName: "DIR", visibility: .hidden))
    var templates: String?
}
