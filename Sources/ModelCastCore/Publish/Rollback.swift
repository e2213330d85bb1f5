import Foundation

/// A rollback: publish a manifest that returns devices to a version that went live before.
package struct RollbackRequest: Sendable {
    /// The version to return to.
    package let version: String
    /// Roll back only this model; the others stay as they are live. nil: the whole release.
    package let model: String?
    /// Republish the old bytes under a new, higher version, so clients that never go
    /// "down" (string `>`, semver `>`) install them too.
    package let bump: Bool
    /// The version `bump` publishes under; nil picks the next one that is higher than any
    /// version published so far, both as a semantic version and as a plain string.
    package let bumpVersion: String?
    package let manifestKey: String
    /// Cache-Control of the manifest; nil keeps the live manifest's.
    package let manifestCacheControl: String?
    /// Base URL for the hosting files; nil takes the one the records were published with.
    package let baseURL: String?
    package let goLive: GoLive

    package init(
        version: String, model: String? = nil, bump: Bool = false, bumpVersion: String? = nil,
        manifestKey: String = "manifest.json", manifestCacheControl: String? = nil, baseURL: String? = nil, goLive: GoLive = GoLive()
    ) {
        self.version = version
        self.model = model
        self.bump = bump || bumpVersion != nil
        self.bumpVersion = bumpVersion
        self.manifestKey = manifestKey
        self.manifestCacheControl = manifestCacheControl
        self.baseURL = baseURL
        self.goLive = goLive
    }

    /// The request's own values, checked before the target is touched.
    func validate() throws {
        guard SemanticVersion(version) != nil else {
            throw ModelCastError.usage("--version '\(version)' is not a semantic version (MAJOR.MINOR.PATCH, e.g. 1.0.0)")
        }
        if let bumpVersion, SemanticVersion(bumpVersion) == nil {
            throw ModelCastError.usage("--bump-to '\(bumpVersion)' is not a semantic version (MAJOR.MINOR.PATCH, e.g. 1.2.1)")
        }
        if let manifestCacheControl { try CachePolicy.validateManifest(manifestCacheControl) }
        if let baseURL { try URLParts.validateBaseURL(baseURL) }
    }
}

/// `rollback`: publishes a manifest that returns devices to an earlier version.
package struct RollbackPublisher: TargetWriting {
    package let writer: TargetWriter

    package init(writer: TargetWriter) {
        self.writer = writer
    }

    /// Publishes a manifest that sends devices back to `request.version`, built from the
    /// record of a release that went live, through the same path as a publish (objects
    /// checked, history record, manifest last). Refuses a version that never went live
    /// or whose objects are gone, naming it.
    package func rollback(_ request: RollbackRequest) async throws -> PublishReport {
        try request.validate()
        let lock = try writer.lockTarget(dryRun: request.goLive.dryRun)
        defer { withExtendedLifetime(lock) {} }
        let state = try await writer.loadForWriting(manifestKey: request.manifestKey, dryRun: request.goLive.dryRun)
        guard let live = state.live else {
            throw ModelCastError.targetState("nothing is published at \(storage.location)/\(request.manifestKey): there is nothing to roll back")
        }
        guard let profile = ManifestProfile(rawValue: live.profile) else {
            throw ModelCastError.targetState("the live release at \(storage.location) has unknown profile '\(live.profile)'")
        }
        try request.goLive.signing?.validate(profile: profile)
        let warnings = writer.warningCollector()

        let target = try rollbackTarget(request, state: state, live: live)
        try await state.confirmStored(target, storage: storage)
        // The models devices go back to, at the version they had then.
        var restored = request.model == nil ? target.models : live.models
        if let model = request.model { restored[model] = target.models[model] }
        let prototypes = request.model == nil ? target.prototypes : live.prototypes
        let rolledBack = request.model.map { [$0] } ?? target.models.keys.sorted()
        // What devices go back to, as a release: the artifacts it names must still be stored.
        let returnedTo = Release(sequence: target.sequence, publishedAt: target.publishedAt, channel: live.channel, profile: live.profile,
                                 models: restored, prototypes: prototypes)
        let proven = try await checkArtifactsPresent(of: returnedTo, version: request.version, trustStored: request.goLive.trustStored)
        let models = try republishedModels(restored, rolledBack: rolledBack, request: request, state: state, live: live, profile: profile, warn: warnings.add)

        // Without --expires-in, keep the live manifest's validity period: a rollback must not silently drop its expiry.
        let expiresAt = (request.goLive.signing?.expiresIn ?? live.validityPeriod).map { request.goLive.publishedAt.addingTimeInterval($0) }
        let release = Release(
            sequence: state.nextSequence, publishedAt: formatTimestamp(request.goLive.publishedAt), expiresAt: expiresAt.map(formatTimestamp),
            channel: live.channel, profile: live.profile, minAppVersion: request.model == nil ? target.minAppVersion : live.minAppVersion,
            meta: request.model == nil ? target.meta : live.meta, models: models, prototypes: prototypes,
            rollback: ReleaseRollback(sequence: target.sequence, models: rolledBack.reduce(into: [:]) { $0[$1] = restored[$1] }),
            replaces: live.sequence)

        guard let baseURL = request.baseURL ?? state.baseURL else {
            throw ModelCastError.targetState("cannot tell the base URL the target is served from: pass --base-url")
        }
        let settings = CommitSettings(
            request, profile: profile, baseURL: baseURL,
            manifestCacheControl: request.manifestCacheControl ?? writer.liveManifestCacheControl(state: state, manifestKey: request.manifestKey),
            signing: request.goLive.signing)
        if let current = state.liveRecord, current.sameContent(as: release) {
            // The report says it ("unchanged: … nothing was written"), once.
            return PublishReport(unchanged: state, settings: settings, warnings: warnings, storage: storage)
        }
        return try await writer.committer.commit(release, state: state, settings: settings, artifacts: [:], proven: proven, warnings: warnings)
    }

    /// The restored models under the version they are published as: the one they had, or
    /// with `--bump` a new, higher one; without it, a warning where the profile's clients
    /// would not go down to the old version.
    private func republishedModels(
        _ restored: [String: ReleaseModel], rolledBack: [String], request: RollbackRequest, state: TargetState, live: Release, profile: ManifestProfile,
        warn: (String) -> Void
    ) throws -> [String: ReleaseModel] {
        var models = restored
        if request.bump {
            let version = try bumpVersion(request, models: rolledBack, state: state, live: live)
            for name in rolledBack {
                // Every variant of the model takes the new version, as the model does.
                models[name]!.version = version
                for index in (models[name]!.variants ?? []).indices { models[name]!.variants![index].model.version = version }
            }
            log("republishing the bytes of \(request.version) as version \(version)")
        } else if let current = live.models[rolledBack[0]]?.version, current != request.version,
                  let warning = profile.rollbackWithoutBumpWarning(deviceVersion: current, targetVersion: request.version) {
            warn(warning)
        }
        return models
    }

    /// The newest release that went live with `request.version` (of `request.model`, or
    /// of every model), or an error saying why there is none.
    private func rollbackTarget(_ request: RollbackRequest, state: TargetState, live: Release) throws -> Release {
        let version = request.version
        func matches(_ record: Release) -> Bool {
            if let model = request.model { return record.models[model]?.version == version }
            return !record.models.isEmpty && record.models.values.allSatisfy { $0.version == version }
        }
        if let model = request.model, live.models[model] == nil {
            throw ModelCastError.liveReleaseConflict("model \(model) is not in the live release at \(storage.location) (it has \(live.models.keys.sorted().joined(separator: ", ")))")
        }
        if let target = state.wentLive.last(where: matches) { return target }
        let subject = request.model.map { "version \(version) of model \($0)" } ?? "version \(version)"
        if let record = state.history.last(where: matches) {
            throw ModelCastError.rollbackTargetUnavailable("\(subject) was recorded as sequence \(record.sequence) but never went live at \(storage.location) (that publish stopped before its manifest was written); refusing to roll back to it")
        }
        if request.model == nil, let record = state.wentLive.last(where: { $0.models.values.contains { $0.version == version } }) {
            let names = record.models.keys.sorted().filter { record.models[$0]!.version == version }
            throw ModelCastError.rollbackTargetUnavailable("version \(version) went live only for model \(names.joined(separator: ", ")) (the release had other versions too); roll back one model with --model \(names[0])")
        }
        var published: [String] = []
        for record in state.wentLive {
            for (name, model) in record.models.sorted(by: { $0.key < $1.key }) where request.model == nil || request.model == name {
                let entry = (live.models.count > 1 ? "\(name) " : "") + model.version
                if !published.contains(entry) { published.append(entry) }
            }
        }
        throw ModelCastError.rollbackTargetUnavailable("\(subject) is not in the publish history of \(storage.location) (never published there, or pruned); versions that went live: \(published.isEmpty ? "none" : published.joined(separator: ", "))")
    }

    /// Every artifact of the release devices go back to (`Release.objects`) must still be
    /// stored whole, with the bytes its record names (hashed, or the store's own checksum);
    /// the commit proves its other objects. Returns the keys proven.
    private func checkArtifactsPresent(of release: Release, version: String, trustStored: Bool) async throws -> Set<String> {
        var proven = Set<String>()
        for object in release.objects where object.kind == .artifact {
            let place = "\(storage.location)/\(object.key)"
            do {
                try await writer.proofs.proveStored([object], localFiles: [:], trustStored: trustStored)
            } catch StorageError.missing {
                throw ModelCastError.rollbackTargetUnavailable("cannot roll back to \(version): \(place) (model \(object.model) \(object.version)) is gone from the target (pruned or deleted)")
            } catch let error as StorageError {
                throw ModelCastError.rollbackTargetUnavailable("cannot roll back to \(version): model \(object.model) \(object.version): \(error)")
            }
            proven.insert(object.key)
        }
        return proven
    }

    /// The version a `--bump` rollback publishes under.
    private func bumpVersion(_ request: RollbackRequest, models: [String], state: TargetState, live: Release) throws -> String {
        // Every version of these models ever recorded: the new one must be above all of them.
        let used = state.history.flatMap { record in models.compactMap { record.models[$0]?.version } }
        if let explicit = request.bumpVersion {
            for name in models {
                guard let current = live.models[name]?.version else { continue }
                guard SemanticVersion(explicit)! > SemanticVersion(current) ?? SemanticVersion("0.0.0")!,
                      Array(current.utf8).lexicographicallyPrecedes(Array(explicit.utf8)) else {
                    throw ModelCastError.versionConflict("--bump-to \(explicit) must be higher than the live version \(current) of model \(name), both as a semantic version and as a string (clients compare either way)")
                }
            }
            if used.contains(explicit) {
                throw ModelCastError.versionConflict("--bump-to \(explicit): that version was already published; pick one never used")
            }
            return explicit
        }
        let highest = used.compactMap(SemanticVersion.init).max() ?? SemanticVersion("0.0.0")!
        let candidates = [
            "\(highest.major).\(highest.minor).\(highest.patch + 1)",
            "\(highest.major).\(highest.minor + 1).0",
            "\(highest.major + 1).0.0",
        ]
        for candidate in candidates where used.allSatisfy({ Array($0.utf8).lexicographicallyPrecedes(Array(candidate.utf8)) }) {
            return candidate
        }
        throw ModelCastError.versionConflict("no version above \(highest) also sorts above it as a string (e.g. 9.9.9 -> 10.0.0 does not): pass --bump-to VERSION")
    }

}
