import Foundation
import ModelCastFormat

/// What a publish did (or, with dry run, would do).
package struct PublishReport: Codable, Sendable {
    /// One object written (or found already in place).
    package struct Object: Codable, Sendable, Equatable {
        package let key: String
        package let role: String
        package let outcome: String
        package let size: Int64
        package let sha256: String
    }

    /// One model of the release: its version, and how many of its files this run stored
    /// and how many were already there (an unchanged model costs no upload).
    package struct Model: Codable, Sendable, Equatable {
        package let name: String
        package let version: String
        package let files: Int
        package let size: Int64
        /// Files this run stored (a dry run: would store).
        package let stored: Int
        /// Files already in the target, reused as they are.
        package let reused: Int
    }

    package let target: String
    package let profile: String
    /// True when the target already held exactly this release: nothing was written.
    package let unchanged: Bool
    package let dryRun: Bool
    package let sequence: Int64
    package let previousSequence: Int64?
    package let manifestKey: String
    package let manifestURL: String
    package let objects: [Object]
    package let warnings: [String]
    /// The manifest as published (or as it would be): its bytes as text. In JSON, the
    /// manifest as an object, with `manifest_sha256` of its bytes.
    package let manifest: String
    /// Requests sent to a network store, by HTTP method.
    package var requests: [String: Int]?
    /// The release's models, by name.
    package var models: [Model] = []
    /// What a device on the live version would fetch of each new file with a segment index.
    package var reuse: [Reuse] = []

    /// For one new file with a segment index: what a device running the live version of
    /// its model fetches to update (`DeltaPlan`), and how.
    package struct Reuse: Codable, Sendable, Equatable {
        package let model: String
        package let version: String
        package let file: String
        /// The live version the device runs.
        package let from: String
        package let size: Int64
        package let fetchedBytes: Int64
        package let rangeRequests: Int
        /// True when the plan fetches more than 70 % of the file: devices download it whole.
        package let wholeDownload: Bool

        enum CodingKeys: String, CodingKey {
            case model, version, file, from, size
            case fetchedBytes = "fetched_bytes", rangeRequests = "range_requests", wholeDownload = "whole_download"
        }
    }

    package init(target: String, profile: String, unchanged: Bool, dryRun: Bool, sequence: Int64, previousSequence: Int64?, manifestKey: String,
                manifestURL: String, objects: [Object], warnings: [String], manifest: String, requests: [String: Int]?, models: [Model] = []) {
        self.target = target
        self.profile = profile
        self.unchanged = unchanged
        self.dryRun = dryRun
        self.sequence = sequence
        self.previousSequence = previousSequence
        self.manifestKey = manifestKey
        self.manifestURL = manifestURL
        self.objects = objects
        self.warnings = warnings
        self.manifest = manifest
        self.requests = requests
        self.models = models
    }

    /// The models of `release`, with what `objects` says this run stored of their files.
    static func models(of release: Release?, objects: [Object]) -> [Model] {
        guard let release else { return [] }
        let stored = Set(objects.filter { $0.role == "artifact" && ($0.outcome == "created" || $0.outcome == "would store") }.map(\.key))
        // Per unit: a model with variants reports each variant (`NAME@VARIANT`).
        let units = release.unitsByLabel
        return units.keys.sorted().map { name in
            let model = units[name]!
            let count = model.files.filter { stored.contains($0.key) }.count
            return Model(name: name, version: model.version, files: model.files.count, size: model.files.reduce(0) { $0 + $1.size },
                         stored: count, reused: model.files.count - count)
        }
    }

    enum CodingKeys: String, CodingKey {
        case target, profile, unchanged, sequence, models, objects, warnings, manifest, requests, reuse
        case dryRun = "dry_run", previousSequence = "previous_sequence", manifestKey = "manifest_key", manifestURL = "manifest_url"
        case manifestSHA256 = "manifest_sha256"
    }

    package func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(target, forKey: .target)
        try c.encode(profile, forKey: .profile)
        try c.encode(unchanged, forKey: .unchanged)
        try c.encode(dryRun, forKey: .dryRun)
        try c.encode(sequence, forKey: .sequence)
        try c.encodeIfPresent(previousSequence, forKey: .previousSequence)
        try c.encode(manifestKey, forKey: .manifestKey)
        try c.encode(manifestURL, forKey: .manifestURL)
        try c.encode(models, forKey: .models)
        try c.encode(objects, forKey: .objects)
        try c.encode(warnings, forKey: .warnings)
        let bytes = Data(manifest.utf8)
        // The manifest as JSON (what a pipeline reads), and the SHA-256 of its exact bytes.
        if let value = try? JSONValue(parsing: bytes) {
            try c.encode(value, forKey: .manifest)
        } else {
            try c.encode(manifest, forKey: .manifest)
        }
        if !bytes.isEmpty { try c.encode(SHA256Hasher.digest(bytes).hex, forKey: .manifestSHA256) }
        try c.encodeIfPresent(requests, forKey: .requests)
        try c.encode(reuse, forKey: .reuse)
    }

    package init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        target = try c.decode(String.self, forKey: .target)
        profile = try c.decode(String.self, forKey: .profile)
        unchanged = try c.decode(Bool.self, forKey: .unchanged)
        dryRun = try c.decode(Bool.self, forKey: .dryRun)
        sequence = try c.decode(Int64.self, forKey: .sequence)
        previousSequence = try c.decodeIfPresent(Int64.self, forKey: .previousSequence)
        manifestKey = try c.decode(String.self, forKey: .manifestKey)
        manifestURL = try c.decode(String.self, forKey: .manifestURL)
        objects = try c.decode([Object].self, forKey: .objects)
        warnings = try c.decode([String].self, forKey: .warnings)
        if let text = try? c.decode(String.self, forKey: .manifest) {
            manifest = text
        } else {
            manifest = try c.decode(JSONValue.self, forKey: .manifest).serialized()
        }
        requests = try c.decodeIfPresent([String: Int].self, forKey: .requests)
        models = try c.decodeIfPresent([Model].self, forKey: .models) ?? []
        reuse = try c.decodeIfPresent([Reuse].self, forKey: .reuse) ?? []
    }
}

/// Publishes releases to a `Storage`: packs every model, stores the artifacts under
/// immutable keys, keeps a history record, writes the hosting files, and replaces
/// the manifest last. Nothing a device can fetch ever names a missing object.
package struct Publisher: Sendable {
    package let storage: any Storage
    /// Receives warnings and progress lines (the CLI prints them to standard error).
    package let log: @Sendable (String) -> Void

    /// Runs after every artifact is stored and checked, before the history record
    /// and the manifest are written; throwing stops the publish with nothing live changed.
    package let beforeManifest: (@Sendable (Data) async throws -> Void)?

    package init(storage: any Storage, log: @escaping @Sendable (String) -> Void = { _ in }, beforeManifest: (@Sendable (Data) async throws -> Void)? = nil) {
        self.storage = storage
        self.log = log
        self.beforeManifest = beforeManifest
    }

    /// HEADs a stored object and compares what the store reports with what was published.
    static func checkStored(_ key: String, expected: ObjectMetadata, storage: any Storage) async throws {
        let place = "\(storage.location)/\(key)"
        guard let info = try await storage.head(key) else {
            throw ModelCastError.io(operation: "check stored object", path: place, reason: "missing after upload")
        }
        if let problem = info.difference(from: expected) {
            throw ModelCastError.io(operation: "check stored object", path: place, reason: problem)
        }
    }

    /// Publishes `request`. Bad input fails before the target is touched; a failure
    /// while storing removes what this run created and leaves the live manifest as it was.
    package func publish(_ request: PublishRequest) async throws -> PublishReport {
        let warnings = warningCollector()
        let warn = warnings.add
        if request.baseURL.lowercased().hasPrefix("http://") {
            warn("base URL \(request.baseURL) is plain http: iOS App Transport Security refuses it outside local testing")
        }
        try request.signing?.validate(profile: request.profile)
        // Inspect every input before anything is written: a bad model fails here.
        let descriptions = try Self.describeInputs(of: request)
        let contract = try InterfaceContract(units: request.models.flatMap(\.units), descriptions: descriptions)
        try contract.checkClassCounts(request)
        for warning in contract.warnings { warn(warning) }

        let lock = try lockTarget(dryRun: request.dryRun, create: true)
        defer { withExtendedLifetime(lock) {} }
        let state = try await loadForWriting(manifestKey: request.manifestKey, dryRun: request.dryRun)
        let live = state.live
        try checkBaseURL(request, state: state, warn: warn)
        try checkDroppedModels(request, live: live)
        let (givenVersions, adoptedTexts) = Self.publishedVersionTexts(request, wentLive: state.wentLive)
        let request = request.adoptingVersions(adoptedTexts)
        try checkVersions(request.models.flatMap(\.units).map { ($0.name, $0.version) }, live: live, profile: request.profile, warn: warn)
        for line in try contract.check(request, state: state) { warn(line) }
        try await ModelSignatures.checkKeyChange(request.options.modelSigning, unsigned: request.options.unsignedModels, live: live, storage: storage)

        // Pack (or, for a dry run, only hash) every file.
        let staging = try StagingArea(storage: storage, dryRun: request.dryRun, request: request, live: state.liveRecord)
        defer { staging.close() }
        var packed = try await Self.packModels(request, into: staging, descriptions: descriptions)
        contract.record(into: &packed.models, live: live)
        if let signing = request.options.modelSigning {
            let names = Dictionary(request.models.flatMap { model in model.units.map { ($0.name, (model: model.name, key: $0.keyName)) } },
                                   uniquingKeysWith: { first, _ in first })
            try await ModelSignatures(key: signing.key, storage: storage, baseURL: request.baseURL)
                .sign(&packed.models, descriptions: descriptions, names: names, live: live, staging: staging)
        }
        try checkVersionsKeepTheirFiles(packed.models, wentLive: state.wentLive, givenVersions: givenVersions)
        let reuse = await reportReuse(packed.models, live: live, staging: staging)

        var release = Self.release(of: request, models: VariantAssembly.models(of: request, units: packed.models), prototypes: packed.prototypes, state: state)
        var settings = CommitSettings(request, profile: request.profile, baseURL: request.baseURL, manifestCacheControl: request.manifestCacheControl, signing: request.signing)
        settings.hostedOn = request.hostedOn
        if let rollout = live?.rollout, rollout.isInProgress(at: request.publishedAt) {
            var report = try await publishDuringRollout(rollout, release: release, request: request, state: state, staging: staging, settings: settings, warnings: warnings)
            report.reuse = reuse
            return report
        }
        if request.rolloutPercent != nil || request.rolloutSchedule != nil {
            guard live != nil else {
                throw ModelCastError.usage("\(request.rolloutSchedule != nil ? "--rollout-schedule" : "--rollout"): nothing is live at \(storage.location)/\(request.manifestKey) for the other devices to stay on; publish the first release without it")
            }
            release.rollout = try RolloutRules.start(percent: request.rolloutPercent, schedule: request.rolloutSchedule, for: release, at: request.publishedAt)
        }
        var report = try await commitUnlessLive(release, request: request, state: state, staging: staging, settings: settings, warnings: warnings)
        report.reuse = reuse
        return report
    }

    /// For each artifact with a segment index whose model the live release has with an
    /// index too, what a device on the live version would fetch (`DeltaPlan`), so a
    /// surprise (a re-quantization that changes every tensor) shows before release. Only
    /// information: an index that cannot be read is passed over.
    private func reportReuse(_ models: [String: ReleaseModel], live: Release?, staging: StagingArea) async -> [PublishReport.Reuse] {
        var estimates: [PublishReport.Reuse] = []
        for name in models.keys.sorted() {
            guard let model = models[name], let previous = live?.unitsByLabel[name], previous.version != model.version else { continue }
            for (position, file) in model.files.enumerated() {
                // The live file of the same name, else at the same place (a renamed model file).
                let counterpart = previous.files.first { $0.name == file.name } ?? (position < previous.files.count ? previous.files[position] : nil)
                guard let key = file.segments?.key, let index = staging.segmentIndexes[key], let old = counterpart?.segments,
                      let data = try? await storage.get(old.key, limit: Int(old.size)),
                      let oldIndex = try? SegmentIndex(decoding: [UInt8](data)) else { continue }
                let plan = DeltaPlan(new: index, have: DeltaPlan.offsets(of: oldIndex))
                let share = index.artifactSize == 0 ? 0 : 100 * Double(plan.fetchedBytes) / Double(index.artifactSize)
                let how = plan.prefersFullDownload ? "more than 70 %: devices download it whole" : "\(plan.requests) range request\(plan.requests == 1 ? "" : "s")"
                log("\(name) \(model.version) \(file.name): a device on \(previous.version) fetches \(plan.fetchedBytes) of \(index.artifactSize) bytes (\(String(format: "%.1f", share)) %, \(how)); \(String(format: "%.1f", 100 - share)) % reused")
                estimates.append(PublishReport.Reuse(model: name, version: model.version, file: file.name, from: previous.version, size: index.artifactSize,
                                                     fetchedBytes: plan.fetchedBytes, rangeRequests: plan.requests, wholeDownload: plan.prefersFullDownload))
            }
        }
        return estimates
    }

    /// Every input of `request` inspected and validated, by model name.
    private static func describeInputs(of request: PublishRequest) throws -> [String: [ModelDescription]] {
        var descriptions: [String: [ModelDescription]] = [:]
        for model in request.models.flatMap(\.units) + (request.prototypes.map { [$0] } ?? []) {
            descriptions[model.name] = try model.files.map { try ModelInspector.describe($0) }
            if model.layout == .tree, let description = descriptions[model.name]?.first, !description.isDirectory {
                throw ModelCastError.usage("model \(model.name) is published as a tree (--no-zip, or layout: tree), which lists a directory's files, but \(description.path) is a file: publish it without --no-zip")
            }
        }
        return descriptions
    }

    /// Packs (or, for a dry run, only hashes) the models and prototypes of `request` into `staging`.
    private static func packModels(
        _ request: PublishRequest, into staging: StagingArea, descriptions: [String: [ModelDescription]]
    ) async throws -> (models: [String: ReleaseModel], prototypes: ReleaseModel?) {
        var models: [String: ReleaseModel] = [:]
        for model in request.models.flatMap(\.units) { models[model.name] = try await staging.add(model, descriptions: descriptions[model.name]!) }
        var prototypes: ReleaseModel?
        if let model = request.prototypes { prototypes = try await staging.add(model, descriptions: descriptions[model.name]!) }
        return (models, prototypes)
    }

    /// The release `request` publishes above what `state` holds (without a rollout).
    private static func release(of request: PublishRequest, models: [String: ReleaseModel], prototypes: ReleaseModel?, state: TargetState) -> Release {
        Release(
            sequence: state.nextSequence, publishedAt: formatTimestamp(request.publishedAt),
            expiresAt: request.signing?.expiresAt(from: request.publishedAt).map(formatTimestamp),
            channel: request.channel, profile: request.profile.rawValue, minAppVersion: request.minAppVersion,
            meta: request.meta, models: models, prototypes: prototypes,
            rollback: RolloutRules.fallback(replacing: state.live, at: request.publishedAt), replaces: state.live?.sequence)
    }

    /// A publish while the live release is in a staged rollout: refused, unless `release`
    /// is the release rolling out (then its objects are proven and nothing is written).
    private func publishDuringRollout(
        _ rollout: Rollout, release: Release, request: PublishRequest, state: TargetState, staging: StagingArea, settings: CommitSettings, warnings: Warnings
    ) async throws -> PublishReport {
        // One staged rollout at a time: what a new release would fall back to is unclear.
        guard let current = state.liveRecord, current.sameContent(as: release, ignoringRollout: true) else {
            throw RolloutRules.inProgress(rollout, live: state.live!, at: request.publishedAt, storage: storage, manifestKey: request.manifestKey)
        }
        try await confirmUnchanged(current, staging: staging, trustStored: request.trustStored)
        log("a staged rollout of this release is in progress (\(Rollout.percentText(rollout.basisPoints(at: request.publishedAt)))% of devices); nothing was written: change it with `modelcast rollout`")
        return unchangedReport(state: state, settings: settings, warnings: warnings)
    }

    /// The end of a publish: nothing is written when `release` is live already; otherwise
    /// the stored objects it names again are proven, and it is committed.
    private func commitUnlessLive(
        _ release: Release, request: PublishRequest, state: TargetState, staging: StagingArea, settings: CommitSettings, warnings: Warnings
    ) async throws -> PublishReport {
        let signatureMissing = request.signing?.signer != nil && state.signatureData == nil
        if let live = state.liveRecord, live.sameContent(as: release), !signatureMissing {
            // Same bytes, same metadata, and that release is live: nothing to do, nothing is
            // written — once every object it names is proven to hold its bytes (confirming
            // the target is all an unchanged publish does, so it re-reads), and any of this
            // run's objects that went missing is stored again.
            try await confirmUnchanged(live, staging: staging, trustStored: request.trustStored)
            return unchangedReport(state: state, settings: settings, warnings: warnings)
        }
        // Artifacts the live release names with these very bytes (this release's and the
        // fallback's): the live record proves their bytes, so a change to one model of a
        // large catalog does not re-read the others; each is checked present with its size
        // (and the store's own checksum, where it keeps one). --reverify-stored proves them in full.
        let asLive = request.reverifyStored ? [] : Self.artifactsAsLive(release, live: state.liveRecord)
        try await confirmPresent(asLive)
        let asLiveKeys = Set(asLive.map(\.key))
        // Shared tree files: their stored bytes are proven before the manifest names them again.
        let reused = release.objects.filter { $0.kind == .artifact && staging.stored[$0.key] != nil && !asLiveKeys.contains($0.key) }
        try await proveStored(reused.sorted { $0.key < $1.key }, localFiles: staging.stored, trustStored: request.trustStored)
        for warning in request.profile.publishWarnings(release) { warnings.add(warning) }
        // Segment indexes and model signatures this run made are stored again even where the
        // live release names them: put-if-absent proves one that is there and restores one that is gone.
        let artifacts = staging.staged.filter { !asLiveKeys.contains($0.key) }
        return try await commit(release, state: state, settings: settings, artifacts: artifacts, proven: Set(staging.stored.keys).union(asLiveKeys), warnings: warnings) { key in
            staging.consumed(key)
        }
    }

    /// The artifacts of `release` (either section) that `live` names with the same key, size and SHA-256.
    static func artifactsAsLive(_ release: Release, live: Release?) -> [ReleaseObject] {
        guard let live else { return [] }
        var liveObjects: [String: ReleaseObject] = [:]
        for object in live.objects where object.kind == .artifact { liveObjects[object.key] = object }
        return release.objects.filter { object in
            object.kind == .artifact && liveObjects[object.key].map { $0.size == object.size && $0.sha256 == object.sha256 } ?? false
        }
    }

    /// Takes the target's lock, where it has one (publishes, rollbacks and prunes run one
    /// at a time). Only a publish creates a missing target; the commands that work on what
    /// is already published leave a missing one missing (and find nothing there).
    /// A release keeps the base URL the live one was built from: devices, CDN rules and
    /// pinned hosts follow it, and the rollback section still names objects there. Another
    /// base URL (scheme, host or path) needs `--move-base-url`, and then the run says what
    /// must stay served at the old one.
    func checkBaseURL(_ request: PublishRequest, state: TargetState, warn: (String) -> Void) throws {
        guard state.manifestData != nil, let old = state.baseURL else { return }
        func normalized(_ url: String) -> String {
            var text = url
            while text.hasSuffix("/") { text.removeLast() }
            guard let scheme = text.range(of: "://") else { return text }
            let rest = text[scheme.upperBound...]
            let host = rest.prefix { $0 != "/" }
            return text[..<scheme.lowerBound].lowercased() + "://" + host.lowercased() + rest.dropFirst(host.count)
        }
        guard normalized(old) != normalized(request.baseURL) else { return }
        guard request.movesBaseURL else {
            throw ModelCastError.liveReleaseConflict("the live release at \(storage.location)/\(request.manifestKey) was published with --base-url \(old), and this publish names \(request.baseURL): devices would fetch the new files from there while the rollback section and every cached manifest point at \(old). To move on purpose, pass --move-base-url (and keep \(old) serving until every device has the new manifest); otherwise publish with --base-url \(old)")
        }
        // What the live manifest names (devices holding it fetch them there), which the new
        // rollback section names there too.
        let kept = state.live.map { $0.objects(in: [.release]).map(\.key).sorted() } ?? []
        warn("the base URL moves from \(old) to \(request.baseURL): keep \(old) serving \(kept.isEmpty ? "the live release's objects" : kept.joined(separator: ", ")) (the rollback section names them there) and the old manifest until every device has this one")
    }

    func lockTarget(dryRun: Bool, create: Bool = false) throws -> (any StorageLock)? {
        dryRun ? nil : try storage.capabilities.lock?.acquire(create)
    }

    /// Build metadata does not order versions (semver): a version of equal precedence to
    /// one that went live is that version, under the text it was published with. Returns,
    /// by model, the texts as given and the published texts to take instead.
    static func publishedVersionTexts(_ request: PublishRequest, wentLive: [Release]) -> (given: [String: String], adopted: [String: String]) {
        var given: [String: String] = [:], adopted: [String: String] = [:]
        for model in request.models.flatMap(\.units) {
            guard let version = SemanticVersion(model.version),
                  let previous = wentLive.reversed().compactMap({ $0.unitsByLabel[model.name]?.version })
                      .first(where: { $0 != model.version && SemanticVersion($0) == version }) else { continue }
            given[model.name] = model.version
            adopted[model.name] = previous
        }
        return (given, adopted)
    }

    /// A version means the same files for good: not only the live release's, any that went
    /// live (after a rollback the live one is older), or equality clients that have it never
    /// update. `givenVersions`: texts with other build metadata that were taken as these versions.
    func checkVersionsKeepTheirFiles(_ models: [String: ReleaseModel], wentLive: [Release], givenVersions: [String: String]) throws {
        for (name, model) in models {
            for previous in (wentLive.reversed().compactMap { $0.unitsByLabel[name] }) where previous.version == model.version {
                if previous.files.map(\.sha256) != model.files.map(\.sha256) || previous.files.map(\.placement) != model.files.map(\.placement) {
                    if let given = givenVersions[name] {
                        throw ModelCastError.versionConflict("version \(given) of model \(name) has the same precedence as \(model.version), already published with different files (build metadata does not order versions, so clients cannot tell them apart); publish a new version instead")
                    }
                    throw ModelCastError.versionConflict("version \(model.version) of model \(name) is already published with different files; publish a new version instead")
                }
            }
        }
        for (name, given) in givenVersions.sorted(by: { $0.key < $1.key }) {
            log("version \(given) of model \(name) has the same precedence as the published \(models[name]!.version) and the same files: it is that version")
        }
    }

    /// A model the live manifest names is dropped only when `--remove-model` says so:
    /// devices asking for it would otherwise silently get nothing.
    private func checkDroppedModels(_ request: PublishRequest, live: Release?) throws {
        let given = Set(request.models.map(\.name))
        let liveNames = live?.models.keys.sorted() ?? []
        for name in request.removeModels {
            guard live?.models[name] != nil else {
                throw ModelCastError.liveReleaseConflict("--remove-model \(name): the live manifest has no model named \(name) (it has \(liveNames.isEmpty ? "none" : liveNames.joined(separator: ", ")))")
            }
            guard !given.contains(name) else {
                throw ModelCastError.usage("--remove-model \(name): that model is also being published; give it once or the other")
            }
        }
        let dropped = liveNames.filter { !given.contains($0) && !request.removeModels.contains($0) }
        guard dropped.isEmpty else {
            let names = dropped.joined(separator: ", ")
            throw ModelCastError.liveReleaseConflict("this publish would drop model\(dropped.count == 1 ? "" : "s") \(names) from the live manifest at \(storage.location)/\(request.manifestKey) (devices asking for \(dropped.count == 1 ? "it" : "them") would get nothing): publish \(dropped.count == 1 ? "it" : "them") too, or pass \(dropped.map { "--remove-model \($0)" }.joined(separator: " ")) to drop \(dropped.count == 1 ? "it" : "them")")
        }
    }

    /// Versions (model name → version): never lower than the live one (`rollback` names
    /// the command that goes back), with a warning where a higher one sorts lower as a
    /// string, for `profile` only when its clients compare version strings (tiers).
    func checkVersions(_ versions: [(name: String, version: String)], live: Release?, profile: ManifestProfile, rollback: String = "rollback", warn: (String) -> Void) throws {
        for (name, version) in versions {
            guard let previous = live?.unitsByLabel[name], let new = SemanticVersion(version), let old = SemanticVersion(previous.version) else { continue }
            if new < old {
                throw ModelCastError.versionConflict("version \(version) of model \(name) is lower than the live version \(previous.version); to go back, use \(rollback)")
            }
            if profile.comparesVersionStrings, new > old, Array(version.utf8).lexicographicallyPrecedes(Array(previous.version.utf8)) {
                warn("version \(version) of model \(name) sorts below the live \(previous.version) as a plain string: clients that compare version strings with > (the tiers profile's) will not update")
            }
        }
    }

    /// The report of a publish that found its release already live.
    func unchangedReport(state: TargetState, settings: CommitSettings, warnings: Warnings) -> PublishReport {
        let sequence = state.liveRecord?.sequence ?? 0
        return PublishReport(
            target: storage.location, profile: settings.profile.rawValue, unchanged: true, dryRun: settings.dryRun,
            sequence: sequence, previousSequence: sequence, manifestKey: settings.manifestKey,
            manifestURL: URLParts.url(base: settings.baseURL, key: settings.manifestKey), objects: [], warnings: warnings.all,
            manifest: state.manifestData.map { String(decoding: $0, as: UTF8.self) } ?? "", requests: storage.requestCounts,
            models: PublishReport.models(of: state.liveRecord, objects: []))
    }

    /// Renders the hosting files for every object the target holds: the artifacts of
    /// `records` still present, their history records (`recordObjects`) and the signatures
    /// signed releases keep beside them, then `live`
    /// (signature and manifest, manifest last) — and the same of every other channel, as
    /// the target holds it, so publishing one channel never drops another's rules.
    /// Returns the warnings where the directory crosses a host's documented limit (`HostLimits`).
    @discardableResult
    /// `others`: the other channels' states when the caller has read them already.
    func writeHostingFiles(
        _ hosting: HostingTarget, records: [Release], recordObjects: [Int64: ObjectMetadata], live: [HostedObject], excluding: Set<String> = [],
        others: [ChannelState]? = nil, hostedOn: Set<HostLimits.Host> = [], added: Set<String> = []
    ) async throws -> [String] {
        var channels = [ChannelObjects(manifestKey: hosting.manifestKey, records: records, recordObjects: recordObjects, live: live)]
        var others = others
        if others == nil { others = try await otherChannels(besides: hosting.manifestKey) }
        for other in others! {
            channels.append(ChannelObjects(manifestKey: other.manifestKey, records: other.state.history, recordObjects: other.state.recordObjects,
                                           live: try liveHostedObjects(state: other.state, manifestKey: other.manifestKey)))
        }
        // Stable's manifest first, then the other channels by name.
        channels.sort { ($0.manifestKey.hasPrefix(Channels.folder) ? 1 : 0, $0.manifestKey) < ($1.manifestKey.hasPrefix(Channels.folder) ? 1 : 0, $1.manifestKey) }
        let artifacts = Self.artifactHeaders(of: channels.flatMap(\.records))
        var objects: [HostedObject] = []
        for key in artifacts.keys.sorted() where !excluding.contains(key) {
            // Pruned objects are gone; the hosting files list only what is there.
            if try await storage.head(key) != nil {
                objects.append(HostedObject(key: key, role: .artifact, metadata: artifacts[key]!))
            }
        }
        for channel in channels {
            for record in channel.records {
                guard let metadata = channel.recordObjects[record.sequence] else { continue }
                objects.append(HostedObject(key: TargetLayout.historyKey(manifestKey: channel.manifestKey, sequence: record.sequence), role: .history, metadata: metadata))
                // The signature a signed release keeps beside its record: devices read it when
                // the live signature is not the live manifest's, so the host must have it too.
                // A few hundred bytes, read from the directory the hosting files describe.
                let keptKey = TargetLayout.signatureRecordKey(manifestKey: channel.manifestKey, sequence: record.sequence)
                if let kept = try await storage.get(keptKey, limit: SignedManifest.maximumSignatureSize) {
                    objects.append(HostedObject(key: keptKey, role: .history, metadata: try ObjectMetadata(
                        of: kept, cacheControl: CachePolicy.immutable, contentType: SignedManifest.signatureContentType)))
                }
            }
        }
        objects += channels.flatMap(\.live)
        let files = try HostingFiles(objects: objects, baseURL: hosting.baseURL, root: realPath(hosting.root) ?? hosting.root, templates: hosting.templates)
        for file in files.files {
            let path = hosting.root + "/" + file.path
            try makeDirectories(PathText.parent(path))
            let atomic = try AtomicFile(destination: path)
            try Data(file.content.utf8).withUnsafeBytes { try atomic.descriptor.writeAll($0) }
            if file.path.hasSuffix(".sh") { _ = fchmod(atomic.descriptor.fd, 0o755) }
            try atomic.commit(durable: true)
        }
        // Only the hosts the user deploys to, and only about what this run adds.
        return files.warnings(hosts: hostedOn, added: added)
    }

    /// Every object the records name (files, segment indexes, model signatures, their
    /// rollback sections' too: prune keeps them) with the headers it is served with.
    static func artifactHeaders(of records: [Release]) -> [String: ObjectMetadata] {
        var artifacts: [String: ObjectMetadata] = [:]
        for record in records {
            for object in record.objects {
                guard let digest = SHA256Digest(hex: object.sha256) else { continue }
                artifacts[object.key] = ObjectMetadata(cacheControl: CachePolicy.immutable, contentType: object.contentType, size: object.size, sha256: digest)
            }
        }
        return artifacts
    }

    /// Another channel of the target, as read.
    typealias ChannelState = (manifestKey: String, state: TargetState)

    /// Every channel of the target but the one at `manifestKey`, read (their index and live
    /// manifest): what hosting files and prune must also cover.
    func otherChannels(besides manifestKey: String) async throws -> [ChannelState] {
        var others: [ChannelState] = []
        for key in try await Channels.otherManifestKeys(storage, besides: manifestKey) {
            others.append((key, try await TargetState.load(from: storage, manifestKey: key)))
        }
        return others
    }

    /// What one channel adds to the hosting files.
    struct ChannelObjects {
        let manifestKey: String
        let records: [Release]
        let recordObjects: [Int64: ObjectMetadata]
        /// Its signature and manifest, manifest last.
        let live: [HostedObject]
    }

    /// Where and how a directory target's hosting files are written. Loading it reads
    /// and parses the templates, so a bad `--templates` fails before anything is stored.
    struct HostingTarget {
        let root: String
        let manifestKey: String
        let baseURL: String
        let templates: [String: String]

        /// nil for targets that are not a directory (they get no hosting files).
        init?(storage: any Storage, manifestKey: String, baseURL: String, templatesDirectory: String?) throws {
            guard let root = storage.capabilities.hostingRoot else { return nil }
            self.root = root
            self.manifestKey = manifestKey
            self.baseURL = baseURL
            templates = try HostingFiles.templates(overrideDirectory: templatesDirectory)
            _ = try HostingFiles(objects: [], baseURL: baseURL, root: root, templates: templates)
        }
    }
}
