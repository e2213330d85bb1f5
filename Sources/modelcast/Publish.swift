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
                Each MODEL is a file or directory (packed as `modelcast pack` does). MODELs given \
                as plain paths are the files of one model (a GGUF and its mmproj), named by --name \
                or else after the first path's file name without its extension. NAME=PATH puts a \
                file in model NAME, so `1b=m-1b.gguf 3b=m-3b.gguf` publishes two models (tiers). \
                Multi-model catalogs can also come from --config modelcast.yml. A model the live \
                manifest names and this publish leaves out is refused unless --remove-model NAME \
                says so.

                --no-zip (or `layout: tree` for a model in the config file) publishes a directory \
                as a tree: the manifest's model gets `tree` (the directory's name) and every \
                regular file is listed with its `path` inside it, size and SHA-256, stored under \
                a content-addressed key. A file whose bytes an earlier version already stored is \
                proven, not uploaded again; a device rebuilds the directory from the files and \
                swaps it in whole. Only the modelcast profile can name a tree.

                Layout of the target directory (sync it to the host as it is):
                  manifest.json             the manifest, Cache-Control no-cache
                  models/NAME/VERSION/FILE  artifacts, immutable
                  models/NAME/blobs/SHA256  files of tree models (--no-zip), immutable
                                            and shared by every version that has them
                  manifests/SEQUENCE.json   every release that went live (for rollback
                                            and prune)
                  channels/NAME/manifest.json  channel NAME's manifest (--channel NAME),
                                            its history under manifests/channels/NAME/
                  _headers, _modelcast/     header rules, object metadata, upload
                                            scripts, nginx snippet

                _headers covers artifacts with one path pattern per kind of file name. A \
                publish that adds what crosses a limit of a host named with --hosted-on is \
                published with one warning per limit: Cloudflare Pages' (pages) 100 _headers \
                rules or 25 MiB per file, wrangler's 300 MiB per upload.

                Profiles (--profile) and how their clients compare versions:
                \(profileTable { "\($0.summary); \($0.clientRule)" })

                A version lower than the live one is refused (use rollback), the same version with \
                other bytes is refused, and the same bytes again change nothing; build metadata \
                (+build.7) does not make another version. The sequence goes above every history \
                record, the live manifest and its signature; a live manifest no record explains is \
                refused unless --adopt-live. Stored objects are proven (hashed, or the store's own \
                SHA-256 checksum) before the manifest names them again.
                --rollout 10% (or --rollout-schedule) publishes a staged rollout: the manifest names \
                this release as the candidate and the live one as the fallback, and each device \
                decides by a salted hash of its id (see `modelcast rollout --help`). While a rollout \
                is in progress, another release is refused: complete or halt it first.
                published_at comes from SOURCE_DATE_EPOCH when it is set (reproducible manifests); \
                with --expires-in, a manifest that would already be expired is refused.
                """
        )

        @Argument(help: ArgumentHelp("Model files or directories; NAME=PATH assigns a file to model NAME.", valueName: "MODEL"))
        var models: [String] = []

        @Option(help: "Version of the models given on the command line (semantic version, e.g. 1.2.0).")
        var version: String?

        @Option(help: ArgumentHelp("Base URL the target is served from, e.g. https://cdn.example.com/models (or $MODELCAST_BASE_URL).", valueName: "URL"))
        var baseURL: String?

        @Option(help: ArgumentHelp("Target: a directory, or s3://bucket/prefix (or $MODELCAST_TARGET).", valueName: "DIR|S3URL"))
        var to: String?

        @Option(help: "Name of the model given as plain paths (default: the first file's name without extension).")
        var name: String?

        @Option(help: ArgumentHelp("A model the live manifest names that this release leaves out on purpose (repeatable); dropping any other live model is refused.", valueName: "NAME"))
        var removeModel: [String] = []

        @Flag(help: SafetyHelp.adoptLive)
        var adoptLive = false

        @Flag(help: "Publish with a --base-url other than the live release's (refused otherwise): devices then fetch new files from the new URL, while the rollback objects and cached manifests stay at the old one.")
        var moveBaseURL = false

        @Option(help: ArgumentHelp("A host the directory is deployed to: pages (Cloudflare Pages: 25 MiB per file, 100 _headers rules) or wrangler (R2 uploads with wrangler: 300 MiB per file); repeatable. Publish then warns when what it adds crosses that host's limits (without it, no host's limits are checked).", valueName: "HOST"))
        var hostedOn: [HostLimits.Host] = []


        @Flag(help: "Re-read every stored object the release names. By default, a publish that changes the release proves the files the live release names with the same bytes by its history record (checked against the store), not one by one; an unchanged re-publish, `verify s3://…` and `verify DIR` re-read them all.")
        var reverifyStored = false

        @Option(help: "Manifest shape: modelcast, nomlens, tiers, catalog or latest (default: modelcast, or the config file's).")
        var profile: ManifestProfile?

        @Option(help: ArgumentHelp("Publish configuration file (YAML) with models, versions and metadata.", valueName: "FILE"))
        var config: String?

        @Option(help: ArgumentHelp("A field the profile writes, for every model (key=value) or one (MODEL:key=value); repeatable.", valueName: "[MODEL:]KEY=VALUE"))
        var meta: [String] = []

        @Option(help: ArgumentHelp("The catalog's prototypes file (JSON), stored as an immutable artifact beside the models; its version and class count come from the file's \"version\" and \"classes\" unless given below.", valueName: "FILE"))
        var prototypes: String?

        @Option(help: ArgumentHelp("Version of the prototypes (default: the file's \"version\").", valueName: "VERSION"))
        var prototypesVersion: String?

        @Option(help: ArgumentHelp("Number of prototype classes (default: the length of the file's \"classes\" array).", valueName: "N"))
        var prototypesClasses: Int?

        @Option(help: "Minimum app version (tiers min_app_version, catalog minAppVersion, modelcast min_app_version).")
        var minAppVersion: String?

        @Option(help: ArgumentHelp("Release channel to publish to (default: stable, at the manifest key); any other NAME is published at channels/NAME/<manifest key>, with its own history and sequence, sharing the artifacts. Version rules apply per channel.", valueName: "NAME"))
        var channel: String?

        @OptionGroup(title: "Variants, download policy and interface contract")
        var variantOptions: VariantOptions

        @OptionGroup(title: "Staged rollout (modelcast profile)")
        var rolloutOptions: RolloutStartOptions

        @Option(help: "Key of the manifest in the target (default: manifest.json).")
        var manifestKey: String?

        @Option(help: "Cache-Control of the manifest (default: 'no-cache, no-store'; long-lived values are refused).")
        var manifestCacheControl: String?

        @Option(help: ArgumentHelp("Directory of *.mustache files overriding the built-in header and script templates.", valueName: "DIR"))
        var templates: String?

        @Option(help: "Zip entry compression for directory models: store (default) or deflate.")
        var compression: ZipCompression = .store

        @Option(help: ArgumentHelp("Which artifacts get a segment index, so a device holding an older version downloads only the segments that changed (modelcast profile): auto (files of 8 MiB and more), always or never.", valueName: "auto|always|never"))
        var segmentIndex: PublishRequest.SegmentIndexPolicy = .auto

        @Flag(name: .customLong("no-zip"), help: "Publish directory models as trees: every file its own object under models/NAME/blobs/SHA256, shared across versions (modelcast profile only).")
        var noZip = false

        @OptionGroup(title: "Model signatures")
        var modelSigning: ModelSigningOptions

        @OptionGroup(title: "S3 targets")
        var targetOptions: TargetOptions

        /// What every command that makes a release live shares (signing, --verify-url,
        /// --dry-run, --trust-stored): declared once, in GoLiveOptions.
        @OptionGroup
        var goLive: GoLiveOptions

        @Flag(help: "Print a JSON summary instead of text.")
        var json = false

        @OptionGroup(title: "Progress")
        var progressOptions: ProgressOptions

        func run() async throws {
            Interrupts.shared.setMessage(InterruptMessage.publish)
            let environment = ProcessInfo.processInfo.environment
            var commandLine = PublishCommandLine()
            commandLine.models = models
            commandLine.name = name
            commandLine.version = version
            commandLine.profile = profile
            commandLine.baseURL = baseURL ?? environment["MODELCAST_BASE_URL"]
            commandLine.target = to ?? environment["MODELCAST_TARGET"]
            commandLine.configPath = config
            commandLine.meta = meta
            commandLine.minAppVersion = minAppVersion
            commandLine.channel = channel
            commandLine.manifestKey = manifestKey
            commandLine.manifestCacheControl = manifestCacheControl
            commandLine.compression = compression
            commandLine.noZip = noZip
            variantOptions.apply(to: &commandLine)
            commandLine.prototypesPath = prototypes
            commandLine.prototypesVersion = prototypesVersion
            commandLine.prototypesClasses = prototypesClasses
            (commandLine.options.rolloutPercent, commandLine.options.rolloutSchedule) = try rolloutOptions.parsed()
            commandLine.options.removeModels = removeModel
            commandLine.options.movesBaseURL = moveBaseURL
            commandLine.options.hostedOn = Set(hostedOn)
            commandLine.options.reverifyStored = reverifyStored
            commandLine.options.segmentIndexes = segmentIndex
            commandLine.modelSigning = modelSigning.source(environment: environment)
            let display = progressOptions.display(json: json)
            commandLine.progress = display.factory
            commandLine.goLive = try goLive.value(environment: environment, templates: templates, adoptLive: adoptLive)
            let (target, request) = try commandLine.makeRequest()
            let gate = try verifyGate(goLive.verifyURL, manifestKey: request.manifestKey)
            var settings = targetOptions.settings(for: target)
            settings.progress = display.factory
            let report = try await withStorage(settings, environment: environment, log: display.log) { [request] storage in
                try await Publisher(storage: storage, log: display.log, beforeManifest: gate).publish(request)
            }
            try printPublishReport(report, json: json, done: "published", wouldDo: "would publish")
        }
    }
}
