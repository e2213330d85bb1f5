import Foundation

/// `promote`: one channel serves another channel's live release.
package struct PromoteRequest: Sendable {
    /// The channel whose live release is promoted.
    package let from: String
    /// The channel that serves it next.
    package let to: String
    /// Promote only this model; the destination's other models stay. nil: the whole release.
    package let model: String?
    /// The target's manifest key (the channels' keys derive from it).
    package let baseManifestKey: String
    package let goLive: GoLive
    /// Promote as a staged rollout on the destination (hundredths of a percent, or a schedule).
    package let rolloutPercent: Int?
    package let rolloutSchedule: String?

    package init(from: String, to: String, model: String? = nil, baseManifestKey: String = "manifest.json", goLive: GoLive = GoLive(),
                 rolloutPercent: Int? = nil, rolloutSchedule: String? = nil) {
        self.from = from
        self.to = to
        self.model = model
        self.baseManifestKey = baseManifestKey
        self.goLive = goLive
        self.rolloutPercent = rolloutPercent
        self.rolloutSchedule = rolloutSchedule
    }

    /// The destination channel's manifest key.
    package var manifestKey: String { Channels.manifestKey(channel: to, base: baseManifestKey) }
    /// The source channel's manifest key.
    package var sourceManifestKey: String { Channels.manifestKey(channel: from, base: baseManifestKey) }
}

extension PromoteRequest: GoLiveRequest {}

/// `promote`: one channel serves another channel's live release.
package struct Promoter: TargetWriting {
    package let writer: TargetWriter

    package init(writer: TargetWriter) {
        self.writer = writer
    }

    /// Makes channel `to` serve exactly channel `from`'s live release (the same keys and
    /// SHA-256; every object proven in the store first) as a new record of `to`, with `to`'s
    /// next sequence and its live release as the fallback. Nothing is uploaded.
    package func promote(_ request: PromoteRequest) async throws -> PublishReport {
        try Channels.validate(request.from)
        try Channels.validate(request.to)
        try PublishRequest.validateManifestKey(request.baseManifestKey)
        guard request.from != request.to else { throw ModelCastError.usage("--from and --to are both \(request.from): promote moves a release between two channels") }
        let lock = try writer.lockTarget(dryRun: request.goLive.dryRun)
        defer { withExtendedLifetime(lock) {} }
        let (source, promoted) = try await promotionSource(request)
        let state = try await writer.loadForWriting(manifestKey: request.manifestKey, dryRun: request.goLive.dryRun)
        let live = state.live
        let profile = try checkPromotionDestination(request, live: live, promoted: promoted)
        let (models, prototypes) = try promotedModels(request, promoted: promoted, live: live)
        // The destination's version rules, as a publish there would apply them.
        let warnings = writer.warningCollector()
        try VersionRules.checkVersions(models.map { ($0.key, $0.value.version) }.sorted { $0.0 < $1.0 }, live: live, profile: profile, rollback: "rollback --channel \(request.to)", warn: warnings.add)
        try VersionRules.checkVersionsKeepTheirFiles(models, wentLive: state.wentLive, givenVersions: [:], log: log)
        let release = try Self.promotedRelease(request, promoted: promoted, state: state, profile: profile, models: models, prototypes: prototypes)
        guard let baseURL = state.baseURL ?? source.baseURL else {
            throw ModelCastError.targetState("cannot tell the base URL the target is served from (no record names a file)")
        }
        let settings = CommitSettings(request, profile: profile, baseURL: baseURL,
                                      manifestCacheControl: writer.liveManifestCacheControl(state: state, manifestKey: request.manifestKey), signing: request.goLive.signing)
        if let current = state.liveRecord, current.sameContent(as: release) {
            // The report says it ("unchanged: … nothing was written"), once.
            return PublishReport(unchanged: state, settings: settings, warnings: warnings, storage: storage)
        }
        // Every object is proven in the store by the commit's plan before the manifest names it.
        return try await writer.committer.commit(release, state: state, settings: settings, artifacts: [:], warnings: warnings)
    }

    /// The source channel as read, and its live release: one that is fully rolled out and
    /// has the model `--model` names.
    private func promotionSource(_ request: PromoteRequest) async throws -> (state: TargetState, promoted: Release) {
        let sourcePlace = "\(storage.location)/\(request.sourceManifestKey)"
        let source = try await writer.loadForWriting(manifestKey: request.sourceManifestKey, dryRun: request.goLive.dryRun)
        guard source.manifestData != nil else { throw ModelCastError.targetState("channel \(request.from) has nothing published (no \(sourcePlace)): there is nothing to promote") }
        guard let promoted = source.liveRecord else {
            throw ModelCastError.targetState("the live manifest of channel \(request.from) (\(sourcePlace)) matches no history record: modelcast cannot tell what it serves, so it promotes nothing")
        }
        if let rollout = promoted.rollout, rollout.isInProgress(at: request.goLive.publishedAt) {
            throw ModelCastError.liveReleaseConflict("channel \(request.from) is in a staged rollout (\(Rollout.percentText(rollout.basisPoints(at: request.goLive.publishedAt)))% of its devices): complete it there first, so the release promoted is the one all of them run")
        }
        if let model = request.model, promoted.models[model] == nil {
            throw ModelCastError.usage("--model \(model): channel \(request.from)'s live release has no model \(model) (it has \(promoted.models.keys.sorted().joined(separator: ", ")))")
        }
        return (source, promoted)
    }

    /// What the destination's live release (`live`) allows: no rollout in progress there, a
    /// rollout only above a live release, and signing that suits the profile. Returns the
    /// profile: the destination's, or for its first release the promoted one's.
    private func checkPromotionDestination(_ request: PromoteRequest, live: Release?, promoted: Release) throws -> ManifestProfile {
        if let rollout = live?.rollout, rollout.isInProgress(at: request.goLive.publishedAt) {
            throw RolloutRules.inProgress(rollout, live: live!, at: request.goLive.publishedAt, storage: storage, manifestKey: request.manifestKey)
        }
        let profile = ManifestProfile(rawValue: live?.profile ?? promoted.profile) ?? .modelcast
        try RolloutRules.validateStart(percent: request.rolloutPercent, schedule: request.rolloutSchedule, profile: profile, at: request.goLive.publishedAt)
        if request.rolloutPercent != nil || request.rolloutSchedule != nil, live == nil {
            throw ModelCastError.usage("--rollout: channel \(request.to) has nothing live for the other devices to stay on; promote without it")
        }
        try request.goLive.signing?.validate(profile: profile)
        return profile
    }

    /// The models and prototypes the destination serves next: the promoted release's, or
    /// with `--model` the live ones with that model replaced. A whole release may not drop
    /// a model the destination serves.
    private func promotedModels(_ request: PromoteRequest, promoted: Release, live: Release?) throws -> (models: [String: ReleaseModel], prototypes: ReleaseModel?) {
        var models = promoted.models
        var prototypes = promoted.prototypes
        if let model = request.model {
            models = live?.models ?? [:]
            models[model] = promoted.models[model]
            prototypes = live?.prototypes
        } else if let live {
            let dropped = live.models.keys.filter { promoted.models[$0] == nil }.sorted()
            guard dropped.isEmpty else {
                throw ModelCastError.liveReleaseConflict("channel \(request.from)'s release has no model \(dropped.joined(separator: ", ")), which channel \(request.to) serves: promoting it would drop \(dropped.count == 1 ? "it" : "them"). Promote single models with --model")
            }
        }
        return (models, prototypes)
    }

    /// The destination's new release: `models` at its next sequence, above its live release
    /// (the fallback), with a staged rollout when asked for.
    private static func promotedRelease(
        _ request: PromoteRequest, promoted: Release, state: TargetState, profile: ManifestProfile, models: [String: ReleaseModel], prototypes: ReleaseModel?
    ) throws -> Release {
        let live = state.live
        let expiresIn = request.goLive.signing?.expiresIn ?? promoted.validityPeriod
        var release = Release(
            sequence: state.nextSequence, publishedAt: formatTimestamp(request.goLive.publishedAt),
            expiresAt: expiresIn.map { formatTimestamp(request.goLive.publishedAt.addingTimeInterval($0)) },
            channel: request.to, profile: profile.rawValue,
            minAppVersion: request.model == nil ? promoted.minAppVersion : live?.minAppVersion,
            meta: request.model == nil ? promoted.meta : live?.meta ?? [:], models: models, prototypes: prototypes,
            rollback: RolloutRules.fallback(replacing: live, at: request.goLive.publishedAt), replaces: live?.sequence)
        if request.rolloutPercent != nil || request.rolloutSchedule != nil {
            release.rollout = try RolloutRules.start(percent: request.rolloutPercent, schedule: request.rolloutSchedule, for: release, at: request.goLive.publishedAt)
        }
        return release
    }
}
