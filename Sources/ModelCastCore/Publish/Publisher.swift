import Foundation
import ModelCastFormat

/// `publish`: packs every model, stores the artifacts under immutable keys, keeps a
/// history record, writes the hosting files, and replaces the manifest last. Nothing a
/// device can fetch ever names a missing object.
package struct Publisher: TargetWriting {
    package let writer: TargetWriter

    package init(writer: TargetWriter) {
        self.writer = writer
    }

    /// Publishes `request`. Bad input fails before the target is touched; a failure
    /// while storing removes what this run created and leaves the live manifest as it was.
    package func publish(_ request: PublishRequest) async throws -> PublishReport {
        let warnings = writer.warningCollector()
        let warn = warnings.add
        if request.baseURL.lowercased().hasPrefix("http://") {
            warn("base URL \(request.baseURL) is plain http: iOS App Transport Security refuses it outside local testing")
        }
        try request.signing?.validate(profile: request.profile)
        // Inspect every input before anything is written: a bad model fails here.
        let descriptions = try Self.describeInputs(of: request)
        let unitStorage = try Self.unitStorage(of: request, descriptions: descriptions)
        for line in try Self.declaredLicenceNotes(request, descriptions: descriptions) { log(line) }
        let contract = try InterfaceContract(units: request.models.flatMap(\.units), descriptions: descriptions)
        try contract.checkClassCounts(request)
        for warning in contract.warnings { warn(warning) }

        let lock = try writer.lockTarget(dryRun: request.dryRun, create: true)
        defer { withExtendedLifetime(lock) {} }
        let state = try await writer.loadForWriting(manifestKey: request.manifestKey, dryRun: request.dryRun)
        let live = state.live
        try checkBaseURL(request, state: state, warn: warn)
        try checkDroppedModels(request, live: live)
        let (givenVersions, adoptedTexts) = Self.publishedVersionTexts(request, wentLive: state.wentLive)
        let request = request.adoptingVersions(adoptedTexts)
        try VersionRules.checkVersions(request.models.flatMap(\.units).map { ($0.name, $0.version) }, live: live, profile: request.profile, warn: warn)
        let interface = try contract.check(request, state: state)
        for line in interface.warnings { warn(line) }
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
        try VersionRules.checkVersionsKeepTheirFiles(packed.models, wentLive: state.wentLive, givenVersions: givenVersions, log: log)
        let reuse = await reportReuse(packed.models, live: live, staging: staging)

        let models = try VariantAssembly.models(of: request, units: packed.models, storage: unitStorage)
        for line in Self.licenceChanges(models, live: live) { warn(line) }
        var release = Self.release(of: request, models: models, prototypes: packed.prototypes, state: state)
        var settings = CommitSettings(request, profile: request.profile, baseURL: request.baseURL, manifestCacheControl: request.manifestCacheControl, signing: request.signing)
        settings.hostedOn = request.hostedOn
        if let rollout = live?.rollout, rollout.isInProgress(at: request.publishedAt) {
            var report = try await publishDuringRollout(rollout, release: release, request: request, state: state, staging: staging, settings: settings, warnings: warnings)
            report.reuse = reuse
            report.interfaceChanges = interface.changes
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
        report.interfaceChanges = interface.changes
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
                      // try?: only information (see above): an index that cannot be read gives no estimate.
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

    /// Each unit's storage, by label, for a profile that carries it: the bytes its files
    /// take installed — a zip's entries unpacked, a plain or tree file as it is, which the
    /// descriptions already sum (no pass over the bytes) — raised to a stated install size,
    /// never lowered (a stated size below it is refused here, before anything is packed).
    static func unitStorage(of request: PublishRequest, descriptions: [String: [ModelDescription]]) throws -> [String: ReleaseStorage] {
        guard request.profile.carriesModelPolicies else { return [:] }
        var storage: [String: ReleaseStorage] = [:]
        for model in request.models {
            for unit in model.units {
                let computed = ModelDescription.installSize(of: descriptions[unit.name, default: []])
                let label = model.variants.isEmpty ? "model \(model.name)" : "variant \(unit.name.split(separator: "@").last!) of model \(model.name)"
                storage[unit.name] = try model.policies.storage(computed: computed, unit: label)
            }
        }
        return storage
    }

    /// A note per model whose stated SPDX licence (`--licence`, `licence.spdx`) is not the
    /// one its model file declares (compared without case): only a note, as the manifest
    /// carries what the release engineer states. A file whose licence cannot be read gets
    /// none: the interface warning already names what in it does not parse.
    static func declaredLicenceNotes(_ request: PublishRequest, descriptions: [String: [ModelDescription]]) throws -> [String] {
        try request.models.compactMap { model in
            guard let spdx = model.policies.spdx, let unit = model.units.first, let file = descriptions[unit.name]?.first,
                  case .success(let declared)? = try DeclaredLicence.readResult(file), declared.differs(from: spdx) else { return nil }
            return "note: model \(model.name): \(printable(file.path)) declares licence \(declared.line); the manifest names \(spdx), as stated (the file's is not used)"
        }
    }

    /// A note per model whose licence differs from the live release's (its SPDX expression
    /// or URL): an acceptance is of one licence, so devices that gate on it ask again.
    static func licenceChanges(_ models: [String: ReleaseModel], live: Release?) -> [String] {
        guard let live else { return [] }
        return models.keys.sorted().compactMap { name in
            guard let licence = models[name]?.licence, let old = live.models[name] else { return nil }
            let asks = licence.acceptance == LicenceAcceptanceChoice.required.rawValue
            guard let previous = old.licence else {
                return asks ? "licence added for \(name): devices ask for acceptance before they update it" : nil
            }
            guard previous.spdx != licence.spdx || previous.url != licence.url else { return nil }
            let change = "\(ModelPolicyText.licenceName(previous)) -> \(ModelPolicyText.licenceName(licence))"
            return asks ? "licence changed for \(name): devices ask for acceptance again (\(change))" : "licence changed for \(name) (\(change))"
        }
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
        try await writer.proofs.confirmUnchanged(current, staging: staging, trustStored: request.trustStored)
        log("a staged rollout of this release is in progress (\(Rollout.percentText(rollout.basisPoints(at: request.publishedAt)))% of devices); nothing was written: change it with `modelcast rollout`")
        return PublishReport(unchanged: state, settings: settings, warnings: warnings, storage: storage)
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
            try await writer.proofs.confirmUnchanged(live, staging: staging, trustStored: request.trustStored)
            return PublishReport(unchanged: state, settings: settings, warnings: warnings, storage: storage)
        }
        // Artifacts the live release names with these very bytes (this release's and the
        // fallback's): the live record proves their bytes, so a change to one model of a
        // large catalog does not re-read the others; each is checked present with its size
        // (and the store's own checksum, where it keeps one). --reverify-stored proves them in full.
        let asLive = request.reverifyStored ? [] : Self.artifactsAsLive(release, live: state.liveRecord)
        try await writer.proofs.confirmPresent(asLive)
        let asLiveKeys = Set(asLive.map(\.key))
        // Shared tree files: their stored bytes are proven before the manifest names them again.
        let reused = release.objects.filter { $0.kind == .artifact && staging.stored[$0.key] != nil && !asLiveKeys.contains($0.key) }
        try await writer.proofs.proveStored(reused.sorted { $0.key < $1.key }, localFiles: staging.stored, trustStored: request.trustStored)
        for warning in request.profile.publishWarnings(release) { warnings.add(warning) }
        // Segment indexes and model signatures this run made are stored again even where the
        // live release names them: put-if-absent proves one that is there and restores one that is gone.
        let artifacts = staging.staged.filter { !asLiveKeys.contains($0.key) }
        return try await writer.committer.commit(release, state: state, settings: settings, artifacts: artifacts, proven: Set(staging.stored.keys).union(asLiveKeys), warnings: warnings) { key in
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
}
