import Foundation
import NIOConcurrencyHelpers

/// An artifact packed for a publish, waiting to be stored.
struct StagedArtifact {
    let result: PackResult
    /// The user's own file, uploaded from where it is (never moved or deleted).
    let inPlace: Bool
}

/// What every request that ends in a commit (publish, rollback, resign) says about how
/// its release goes live. The flow is one way: flags and the config file make the request
/// (`PublishCommandLine.makeRequest`, or the command's flags), the request and what the
/// target holds make the `CommitSettings`, and those with the release make the `CommitPlan`.
protocol GoLiveRequest {
    var manifestKey: String { get }
    var goLive: GoLive { get }
}

extension PublishRequest: GoLiveRequest {}
extension RollbackRequest: GoLiveRequest {}
extension ResignRequest: GoLiveRequest {}

/// How a release goes live; shared by publish, rollback and resign.
package struct CommitSettings: Sendable {
    package var profile: ManifestProfile
    package var manifestKey: String
    package var manifestCacheControl: String
    package var baseURL: String
    package var templatesDirectory: String?
    package var dryRun: Bool
    package var signing: SigningSettings?
    /// Replace a signed live manifest with an unsigned one; otherwise that is refused.
    package var allowUnsigned = false
    /// Continue from a live manifest that no history record explains (otherwise refused).
    package var adoptLive = false
    /// Where the store cannot prove an existing object's SHA-256 itself, accept its size
    /// instead of downloading and hashing it.
    package var trustStored = false
    /// Where `published_at` came from when it is not the current time, for messages
    /// (`SOURCE_DATE_EPOCH=1700000000`).
    package var publishedAtOrigin: String?
    /// The hosts the directory is deployed to, whose documented limits are checked for
    /// what this run adds (`--hosted-on`); none: no host's limits are checked.
    package var hostedOn: Set<HostLimits.Host> = []

    package init(
        profile: ManifestProfile, manifestKey: String, manifestCacheControl: String = CachePolicy.manifestDefault,
        baseURL: String, templatesDirectory: String? = nil, dryRun: Bool = false, signing: SigningSettings? = nil
    ) {
        self.profile = profile
        self.manifestKey = manifestKey
        self.manifestCacheControl = manifestCacheControl
        self.baseURL = baseURL
        self.templatesDirectory = templatesDirectory
        self.dryRun = dryRun
        self.signing = signing
    }

    /// The settings for `request` once what it leaves open is known from the target (the
    /// profile, base URL and Cache-Control a rollback or resign keeps from the live release).
    init(_ request: some GoLiveRequest, profile: ManifestProfile, baseURL: String, manifestCacheControl: String, signing: SigningSettings?) {
        self.init(
            profile: profile, manifestKey: request.manifestKey, manifestCacheControl: manifestCacheControl,
            baseURL: baseURL, templatesDirectory: request.goLive.templatesDirectory, dryRun: request.goLive.dryRun, signing: signing)
        allowUnsigned = request.goLive.allowUnsigned
        adoptLive = request.goLive.adoptLive
        trustStored = request.goLive.trustStored
        publishedAtOrigin = request.goLive.publishedAtOrigin
    }

    /// The detached signature's key: `manifest.json.minisig`, where minisign looks for it.
    package var signatureKey: String { SignedManifest.signatureKey(for: manifestKey) }
}

/// Everything a commit writes, rendered, signed and checked before any write: what
/// `--dry-run` reports, and what `apply` executes in order (artifacts, history record,
/// hosting files, signature, manifest last).
struct CommitPlan {
    /// One artifact to store: the staged file and the metadata it is stored with.
    struct Artifact {
        let key: String
        let staged: StagedArtifact
        let metadata: ObjectMetadata
    }

    let release: Release
    let settings: CommitSettings
    /// In key order.
    let artifacts: [Artifact]
    let historyKey: String
    let historyData: Data
    let historyMetadata: ObjectMetadata
    /// The new detached signature, or nil for an unsigned manifest.
    let signature: (data: Data, metadata: ObjectMetadata)?
    let manifestData: Data
    let manifestMetadata: ObjectMetadata
    /// An unsigned manifest replaces a signed one: the old signature goes once the manifest is live.
    let dropsSignature: Bool
    /// Where the hosting files go (directory targets), with their templates loaded.
    let hosting: Publisher.HostingTarget?
    /// The command's warnings: those found so far, and those applying the plan adds.
    let warnings: Warnings
}

/// The keys a run stored itself (`PutOutcome.created`), for its undo, and whether its
/// history record was written (from then on an identical run may have adopted them).
final class CreatedKeys: Sendable {
    private let list = NIOLockedValueBox<[String]>([])
    private let record = NIOLockedValueBox(false)
    var keys: [String] { list.withLockedValue { $0 } }
    func add(_ key: String) { list.withLockedValue { $0.append(key) } }
    var recordWritten: Bool {
        get { record.withLockedValue { $0 } }
        set { record.withLockedValue { $0 = newValue } }
    }
}

/// Best-effort undo steps recorded while a plan is applied, run newest first. A step
/// that fails is reported (returned), never silently swallowed.
final class UndoJournal {
    private var steps: [(label: String, run: () async throws -> Void)] = []

    func record(_ label: String, _ run: @escaping () async throws -> Void) {
        steps.append((label, run))
    }

    /// Runs only the steps whose label starts with `prefix` (newest first), dropping the
    /// rest: after a manifest write that did not happen, the signature and hosting files
    /// go back, while the stored objects stay for the next attempt.
    func undoOnly(labelsStartingWith prefix: String) async -> [String] {
        steps.removeAll { !$0.label.hasPrefix(prefix) }
        return await undo()
    }

    /// Runs every step, newest first; returns one line per step that failed.
    func undo() async -> [String] {
        var failures: [String] = []
        for step in steps.reversed() {
            do { try await step.run() } catch { failures.append("could not \(step.label): \(error)") }
        }
        steps.removeAll()
        return failures
    }
}

extension Publisher {
    /// Makes `release` live: plans the commit (everything rendered, signed, checked and
    /// the objects it names proven, with no write), then applies the plan — or, for a dry
    /// run, reports it. `consumed` is told of each artifact the store took over (it no
    /// longer needs cleaning up).
    func commit(
        _ release: Release, state: TargetState, settings: CommitSettings, artifacts: [String: StagedArtifact],
        proven: Set<String> = [], warnings: Warnings, consumed: (String) -> Void = { _ in }
    ) async throws -> PublishReport {
        let plan = try await planCommit(release, state: state, settings: settings, artifacts: artifacts, proven: proven, warnings: warnings)
        if settings.dryRun { return try await dryRunReport(plan, state: state) }
        return try await apply(plan, state: state, consumed: consumed)
    }

    /// Everything checked and rendered before anything is written. Reads the target
    /// (proving the earlier objects the release names) but never writes it.
    func planCommit(
        _ release: Release, state: TargetState, settings: CommitSettings, artifacts: [String: StagedArtifact],
        proven: Set<String>, warnings: Warnings
    ) async throws -> CommitPlan {
        let warn = warnings.add
        // The one validation devices and verify apply to what is served: a release with any
        // value they would refuse is never written.
        do { try release.validate() } catch let error as ManifestValueError {
            throw ModelCastError.invalidManifest(source: "the release to publish", reason: error.description)
        }
        try checkNotExpired(release, settings: settings)
        if let problem = state.index.problem, !state.history.isEmpty {
            warn("\(problem): every history record was read instead, and this run writes a new index")
        }
        if state.liveIsUnexplained {
            let shown = state.liveManifestSequence.map { " (sequence \($0))" } ?? ""
            guard settings.adoptLive else {
                throw ModelCastError.targetState("the live manifest \(storage.location)/\(settings.manifestKey)\(shown) matches no history record under \(TargetLayout.historyPrefix(manifestKey: settings.manifestKey)) (a record was deleted, or another tool wrote it), so what devices have is unknown: restore the history, or pass --adopt-live to publish above it as sequence \(release.sequence)")
            }
            warn("adopting the live manifest \(storage.location)/\(settings.manifestKey)\(shown), which no history record explains; this release is sequence \(release.sequence)")
        }
        // Every object the release names that this run does not store itself (a rollback's,
        // a resign's, the fallback's, segment indexes and model signatures alike) was stored
        // earlier: prove its bytes before a manifest names it again.
        try await proveObjects(release.objects.filter { artifacts[$0.key] == nil && !proven.contains($0.key) }, trustStored: settings.trustStored)

        let unsigned = Data(try settings.profile.render(release).serialized().utf8)
        let hosting = try HostingTarget(storage: storage, manifestKey: settings.manifestKey, baseURL: settings.baseURL, templatesDirectory: settings.templatesDirectory)
        try checkSigningKey(settings: settings, state: state)
        let signed = try settings.signing.flatMap { try $0.sign(unsigned, release: release, manifestKey: settings.manifestKey) }
        let dropsSignature = signed == nil && state.signatureData != nil
        if dropsSignature {
            guard settings.allowUnsigned else {
                throw ModelCastError.liveReleaseConflict("the live manifest at \(storage.location)/\(settings.manifestKey) is signed (\(settings.signatureKey)): sign this one too with --sign KEYFILE (or $MODELCAST_SIGNING_KEY), or pass --unsigned to drop the signature")
            }
            warn("the live manifest is signed and this one is not: \(settings.signatureKey) is removed, and clients that require a signature will refuse the new manifest")
        }
        let manifestData = signed?.manifest ?? unsigned
        let historyData = Data(release.jsonValue().serialized().utf8)
        try ServedLimits.check(manifest: manifestData, record: historyData, manifestKey: settings.manifestKey)
        let signatureData = signed.map { Data($0.signatureFile.utf8) }
        return CommitPlan(
            release: release, settings: settings,
            artifacts: artifacts.keys.sorted().map { key in
                let result = artifacts[key]!.result
                return .init(key: key, staged: artifacts[key]!, metadata: ObjectMetadata(
                    cacheControl: CachePolicy.immutable, contentType: result.contentType, size: result.size, sha256: result.sha256))
            },
            historyKey: TargetLayout.historyKey(manifestKey: settings.manifestKey, sequence: release.sequence), historyData: historyData,
            historyMetadata: try TargetLayout.recordMetadata(of: historyData),
            signature: try signatureData.map {
                ($0, try ObjectMetadata(of: $0, cacheControl: settings.manifestCacheControl, contentType: SignedManifest.signatureContentType))
            },
            manifestData: manifestData,
            manifestMetadata: try ObjectMetadata(of: manifestData, cacheControl: settings.manifestCacheControl, contentType: "application/json"),
            dropsSignature: dropsSignature, hosting: hosting, warnings: warnings)
    }

    /// A signed target keeps its key: devices pin it, and a manifest signed with another
    /// key is refused by every one of them, this release and every later one. Another key
    /// needs `--rotate-key` (after an app that pins both has shipped).
    func checkSigningKey(settings: CommitSettings, state: TargetState) throws {
        guard let signer = settings.signing?.signer, settings.signing?.rotatesKey != true,
              let liveKey = state.liveSigningKeyID, liveKey != signer.keyIDHex else { return }
        throw ModelCastError.liveReleaseConflict("the live manifest at \(storage.location)/\(settings.manifestKey) is signed with key \(liveKey), and this run signs with key \(signer.keyIDHex): every device that pinned \(liveKey) would refuse this release and every later one. To rotate keys, first ship an app version that pins both, then pass --rotate-key (docs/signing.md: Rotating the signing key); to keep the key, sign with the one whose id is \(liveKey)")
    }

    /// The report of a dry run: the plan, with what the target already holds of each artifact.
    func dryRunReport(_ plan: CommitPlan, state: TargetState) async throws -> PublishReport {
        var objects: [PublishReport.Object] = []
        for artifact in plan.artifacts {
            var outcome = "would store"
            if let existing = try await storage.head(artifact.key) {
                outcome = existing.size == artifact.metadata.size ? "exists" : "conflict (different size)"
            }
            objects.append(.init(key: artifact.key, role: "artifact", outcome: outcome, size: artifact.metadata.size, sha256: artifact.metadata.sha256.hex))
        }
        objects.append(.init(key: plan.historyKey, role: "history", outcome: "would store", size: plan.historyMetadata.size, sha256: plan.historyMetadata.sha256.hex))
        if let signature = plan.signature {
            objects.append(.init(key: plan.settings.signatureKey, role: "signature", outcome: "would replace", size: signature.metadata.size, sha256: signature.metadata.sha256.hex))
        }
        objects.append(.init(key: plan.settings.manifestKey, role: "manifest", outcome: "would replace", size: plan.manifestMetadata.size, sha256: plan.manifestMetadata.sha256.hex))
        return report(plan, state: state, objects: objects, warnings: plan.warnings.all)
    }

    /// Replaces the history index with the state's records plus the new one, if the
    /// index is still what the state read (another writer makes this fail). Undone by
    /// putting back the state's records (or removing an index that did not exist).
    /// `restoring`: false where the record stays whatever happens (writers do not take
    /// turns): the index then names a record that is there, and is left as written.
    private func writeIndex(adding plan: CommitPlan, state: TargetState, journal: UndoJournal, restoring: Bool) async throws {
        let manifestKey = plan.settings.manifestKey
        let before = state.indexEntries.filter { $0.record.sequence != plan.release.sequence }
        // The plan already holds the record's bytes and digest.
        let added = HistoryIndex.Entry(record: plan.release, metadata: plan.historyMetadata, bytes: plan.historyData)
        try await writeIndex(before + [added], manifestKey: manifestKey, ifMatch: state.index.etag)
        guard restoring else { return }
        journal.record("restore \(HistoryIndex.key(manifestKey: manifestKey))") {
            guard !state.index.etag.isEmpty else { return try await self.storage.delete(HistoryIndex.key(manifestKey: manifestKey)) }
            try await self.writeIndex(before, manifestKey: manifestKey, ifMatch: nil)
        }
    }

    /// Executes `plan`: artifacts (each checked), the `beforeManifest` gate, the history
    /// record, the hosting files, the signature, and the manifest last. Before the manifest
    /// write, a failure undoes what this run did (removing only keys it saw itself create);
    /// after it, nothing is removed. An undo step that fails is reported in the error.
    func apply(_ plan: CommitPlan, state: TargetState, consumed: (String) -> Void) async throws -> PublishReport {
        let settings = plan.settings
        let warn = plan.warnings.add
        var objects: [PublishReport.Object] = []
        let journal = UndoJournal()
        // What this run stored itself. Undone last, and only where no release names it: the
        // same bytes have the same ETag, so another run that found them may rely on them.
        let created = CreatedKeys()
        // From the history record on, an interrupt waits for the manifest (Interrupts).
        var committing = false
        var wentLive: String?
        defer { if committing { Interrupts.shared.endCommit(live: wentLive) } }
        journal.record("remove the objects this run stored") {
            // Once this run's history record is written, an identical run may have adopted it
            // (same key, same bytes) and every object it names: on a store whose writers do
            // not take turns, nothing this run wrote is removed then (`leftForPrune`).
            guard !created.recordWritten || self.storage.capabilities.writersTakeTurns else {
                self.log("warning: \(Self.leftForPrune(created.keys, record: plan.historyKey))")
                return
            }
            let outcome = try await self.removeUnnamed(created.keys)
            for kept in outcome.kept { self.log("warning: left \(kept.key) in place: \(kept.reason)") }
        }
        do {
            objects += try await storeArtifacts(plan, created: created, consumed: consumed)
            if let beforeManifest {
                // E.g. a full verify through the public URL: the manifest goes live only if it passes.
                try await beforeManifest(plan.manifestData)
            }
            Interrupts.shared.beginCommit()
            committing = true
            objects.append(try await writeRecords(plan, state: state, created: created, journal: journal))
            try await rewriteHostingFiles(for: plan, state: state, created: created, journal: journal)
            if let signature = try await replaceSignature(plan, state: state, journal: journal) { objects.append(signature) }
        } catch {
            throw await undoFailedCommit(error, journal: journal, warnings: plan.warnings)
        }
        try await replaceManifest(plan, state: state, journal: journal)
        objects.append(.init(key: settings.manifestKey, role: "manifest", outcome: state.manifestData == nil ? "created" : "replaced", size: plan.manifestMetadata.size, sha256: plan.manifestMetadata.sha256.hex))
        // The new manifest is live: from here on nothing it names is removed, whatever fails.
        if plan.dropsSignature {
            do { try await storage.delete(settings.signatureKey) } catch {
                warn("could not remove the old signature \(settings.signatureKey) (\(error)); it no longer matches the manifest: delete it")
            }
        }
        wentLive = "after the release went live: sequence \(plan.release.sequence) is published to \(storage.location); there is nothing to resume"
        return report(plan, state: state, objects: objects, warnings: plan.warnings.all)
    }

    /// What a failed run says of the objects it leaves for prune (see `apply`).
    static func leftForPrune(_ keys: [String], record: String) -> String {
        let shown = keys.sorted().prefix(5).joined(separator: ", ") + (keys.count > 5 ? " and \(keys.count - 5) more" : "")
        return "left \(record)" + (keys.isEmpty ? "" : " and the \(keys.count) object\(keys.count == 1 ? "" : "s") this run stored (\(shown))")
            + " in place: another run publishing the same bytes may have adopted them, and identical bytes cannot tell whose they are. The release never went live; `modelcast prune` removes what no kept release names"
    }

    /// `apply`'s first step: stores each artifact and proves it there. Returns their report lines.
    private func storeArtifacts(_ plan: CommitPlan, created: CreatedKeys, consumed: (String) -> Void) async throws -> [PublishReport.Object] {
        var objects: [PublishReport.Object] = []
        for artifact in plan.artifacts {
            let result = artifact.staged.result
            let put = try await storage.putIfAbsent(artifact.key, staged: StagedObject(
                path: result.path, metadata: artifact.metadata, isTemporary: !artifact.staged.inPlace, source: result.source, parts: result.parts))
            consumed(artifact.key)
            if put == .created { created.add(artifact.key) }
            // Prove the object is there, whole and with its headers, before anything names it:
            // the store proved what it created; what was there already is checked here.
            if put != .created { try await Self.checkStored(artifact.key, expected: artifact.metadata, storage: storage) }
            objects.append(.init(key: artifact.key, role: "artifact", outcome: put == .created ? "created" : "unchanged",
                                 size: artifact.metadata.size, sha256: artifact.metadata.sha256.hex))
        }
        return objects
    }

    /// `apply`'s first step once committing: the history record, the release's kept
    /// signature and the index, then the check that nothing the release names was removed
    /// meanwhile. Returns the record's report line.
    private func writeRecords(_ plan: CommitPlan, state: TargetState, created: CreatedKeys, journal: UndoJournal) async throws -> PublishReport.Object {
        // `.unchanged` means these very bytes are there: a retried PUT whose first answer
        // was lost, or an identical publish running at the same time. This run cannot
        // tell which, so it never deletes such a record: only what it saw itself create.
        // A different record under the key is a conflict the store reports as an error.
        // Where writers do not take turns, a record this run wrote stays whatever happens:
        // an identical run (same release, same second) finds the same bytes under the same
        // key, adopts them and may go live with them, and no request can tell its adoption
        // from ours. A record that never went live is harmless (history shows it so; the next
        // run numbers above it) and prune removes it with what it names.
        let takesTurns = storage.capabilities.writersTakeTurns
        let outcome: PutOutcome
        do {
            outcome = try await storage.putIfAbsent(plan.historyKey, data: plan.historyData, metadata: plan.historyMetadata)
        } catch {
            // Another run's record holds the key: this run's record was never written. After
            // any other failure the write may have landed: the key is read back to tell.
            if case StorageError.conflict = error {} else { created.recordWritten = await recordLanded(plan) }
            throw error
        }
        created.recordWritten = true
        if outcome == .created, takesTurns {
            journal.record("remove \(plan.historyKey)") { try await self.storage.delete(plan.historyKey) }
        }
        let record = PublishReport.Object(key: plan.historyKey, role: "history", outcome: "created", size: plan.historyMetadata.size, sha256: plan.historyMetadata.sha256.hex)
        if let signature = plan.signature {
            // The release's signature is kept beside its record before the live one
            // changes: a run stopped between the signature and the manifest writes
            // leaves what the next command needs to put the live pair right.
            let keptKey = TargetLayout.signatureRecordKey(manifestKey: plan.settings.manifestKey, sequence: plan.release.sequence)
            let kept = try ObjectMetadata(of: signature.data, cacheControl: CachePolicy.immutable, contentType: SignedManifest.signatureContentType)
            if try await storage.putIfAbsent(keptKey, data: signature.data, metadata: kept) == .created, takesTurns {
                journal.record("remove \(keptKey)") { try await self.storage.delete(keptKey) }
            }
        }
        try await writeIndex(adding: plan, state: state, journal: journal, restoring: takesTurns)
        // This run's record is written: a run removing objects from here on sees it.
        // What the release names that this run did not store must have outlived any
        // removal announced before; what the live record names needs no check (no run
        // removes what a record names, and the live record stays while it is live, as
        // this run's manifest write requires), so an unchanged model costs nothing.
        try await confirmNotRemoved(plan.release.referencedKeys.subtracting(created.keys)
            .subtracting(state.liveRecord?.referencedKeys ?? []))
        return record
    }

    /// After a record write that failed without an answer that settles it: true when the
    /// record's key holds this run's bytes, or when that cannot be read (unknown counts as written).
    private func recordLanded(_ plan: CommitPlan) async -> Bool {
        do {
            return try await storage.get(plan.historyKey, limit: TargetLayout.recordLimit).map { $0 == plan.historyData } ?? false
        } catch {
            return true
        }
    }

    /// `apply`'s hosting files (directory targets): rewritten with the new record, signature
    /// and manifest, their warnings added to the plan's; undone by rewriting them as they were.
    private func rewriteHostingFiles(for plan: CommitPlan, state: TargetState, created: CreatedKeys, journal: UndoJournal) async throws {
        guard let hosting = plan.hosting else { return }
        let settings = plan.settings
        var hosted = [HostedObject(key: settings.manifestKey, role: .manifest, metadata: plan.manifestMetadata)]
        if let signature = plan.signature {
            hosted.insert(HostedObject(key: settings.signatureKey, role: .signature, metadata: signature.metadata), at: 0)
        }
        var recordObjects = state.recordObjects
        recordObjects[plan.release.sequence] = plan.historyMetadata
        journal.record("restore the hosting files") {
            try await self.writeHostingFiles(hosting, records: state.history, recordObjects: state.recordObjects,
                                             live: try self.liveHostedObjects(state: state, manifestKey: settings.manifestKey))
        }
        for warning in try await writeHostingFiles(hosting, records: state.history + [plan.release], recordObjects: recordObjects, live: hosted,
                                                   hostedOn: settings.hostedOn, added: Set(created.keys)) {
            plan.warnings.add(warning)
        }
    }

    /// `apply`'s last step before the manifest: the new live signature, if the plan has one.
    /// Returns its report line.
    private func replaceSignature(_ plan: CommitPlan, state: TargetState, journal: UndoJournal) async throws -> PublishReport.Object? {
        guard let signature = plan.signature else { return nil }
        let settings = plan.settings
        // The signature goes up just before the manifest; until the manifest follows,
        // a client proves the live manifest with the signature its release kept beside
        // its record (`writeRecords`), and stock minisign sees a mismatch.
        journal.record("restore \(settings.signatureKey)") { try await self.restoreSignature(state.signatureData, settings: settings) }
        try await storage.replace(settings.signatureKey, data: signature.data, metadata: signature.metadata, ifMatch: nil)
        return .init(key: settings.signatureKey, role: "signature", outcome: state.signatureData == nil ? "created" : "replaced", size: signature.metadata.size, sha256: signature.metadata.sha256.hex)
    }

    /// Undoes what was done before the manifest write, and names what could not be undone
    /// next to the failure.
    private func undoFailedCommit(_ error: Error, journal: UndoJournal, warnings: Warnings) async -> Error {
        let leftovers = await journal.undo()
        guard !leftovers.isEmpty else { return error }
        leftovers.forEach { warnings.add($0) }
        return CommitError("\(error); undoing it left \(leftovers.count) problem\(leftovers.count == 1 ? "" : "s"): \(leftovers.joined(separator: "; "))", cause: error)
    }

    /// The write that makes the release live. When the store does not confirm it, what is
    /// live is read back to decide what is undone (see below).
    private func replaceManifest(_ plan: CommitPlan, state: TargetState, journal: UndoJournal) async throws {
        let settings = plan.settings
        let warn = plan.warnings.add
        do {
            try await storage.replace(settings.manifestKey, data: plan.manifestData, metadata: plan.manifestMetadata, ifMatch: state.manifestInfo?.etag ?? "")
        } catch {
            // The store's answer may have been lost after the manifest was written, or the
            // write may still land. What is undone depends on what is live now: only a
            // positively unchanged manifest gets its old signature and hosting files back;
            // the objects the new manifest names stay in place for the next attempt.
            let current: Data?
            do {
                current = try await storage.get(settings.manifestKey, limit: TargetLayout.recordLimit)
            } catch let readError {
                throw CommitError("the store did not confirm the manifest write (\(error)) and it could not be read back (\(readError)); nothing was restored, so the signature matches the new manifest if it lands. Check the target with `modelcast verify` and publish again", cause: error)
            }
            if current == plan.manifestData {
                warn("the store did not confirm the manifest write (\(error)), but the new manifest is live")
            } else if current == state.manifestData {
                let leftovers = await journal.undoOnly(labelsStartingWith: "restore ")
                leftovers.forEach { warn($0) }
                throw CommitError("the manifest was not replaced (\(error)); the previous manifest is still live, and this release's objects stay in place for the next attempt" + (leftovers.isEmpty ? "" : "; " + leftovers.joined(separator: "; ")), cause: error)
            } else {
                // Another run went live first. This run's signature may have replaced the
                // one of the manifest now live: put that one back from its kept copy (the
                // repair every writing command makes) so devices see a matching pair.
                if plan.signature != nil {
                    do { _ = try await loadForWriting(manifestKey: settings.manifestKey, dryRun: false) } catch let repairError {
                        warn("could not check the live signature against the manifest another run made live (\(repairError)); the next publish, rollback, resign, promote or prune puts it right")
                    }
                }
                throw CommitError("the store did not confirm the manifest write (\(error)) and another manifest is live now (a concurrent publish?); this release did not go live. Check the target with `modelcast verify` and publish again", cause: error)
            }
        }
    }

    /// Puts the live signature back (or removes the new one when there was none).
    private func restoreSignature(_ liveSignature: Data?, settings: CommitSettings) async throws {
        if let liveSignature {
            let metadata = try ObjectMetadata(of: liveSignature, cacheControl: settings.manifestCacheControl, contentType: SignedManifest.signatureContentType)
            try await storage.replace(settings.signatureKey, data: liveSignature, metadata: metadata, ifMatch: nil)
        } else {
            try await storage.delete(settings.signatureKey)
        }
    }

    private func report(_ plan: CommitPlan, state: TargetState, objects: [PublishReport.Object], warnings: [String]) -> PublishReport {
        PublishReport(
            target: storage.location, profile: plan.settings.profile.rawValue, unchanged: false, dryRun: plan.settings.dryRun,
            sequence: plan.release.sequence, previousSequence: state.live?.sequence, manifestKey: plan.settings.manifestKey,
            manifestURL: URLParts.url(base: plan.settings.baseURL, key: plan.settings.manifestKey), objects: objects,
            warnings: warnings, manifest: String(decoding: plan.manifestData, as: UTF8.self), requests: storage.requestCounts,
            models: PublishReport.models(of: plan.release, objects: objects))
    }

    /// A manifest that is expired when written (a `published_at` fixed in the past, e.g.
    /// by SOURCE_DATE_EPOCH, plus a short validity period) would be refused by every
    /// device the moment it went live: refuse it here, naming both values.
    func checkNotExpired(_ release: Release, settings: CommitSettings, now: Date = Date()) throws {
        guard let text = release.expiresAt, let expiry = parseTimestamp(text), expiry <= now,
              let published = parseTimestamp(release.publishedAt) else { return }
        throw ModelCastError.expiredManifest(
            publishedAt: release.publishedAt, origin: settings.publishedAtOrigin,
            validity: formatDuration(expiry.timeIntervalSince(published)), expiresAt: text, now: formatTimestamp(now))
    }

    /// Proves each stored object in `files` holds the bytes its record says (the store's own
    /// checksum, or hashing), so a damaged or replaced object never goes live again.
    /// `localFiles`: a local copy of a key's bytes, where the run has one.
    /// The proofs run `Self.concurrentProofs` at a time (most are one HEAD, so a catalog of
    /// many models is proven in a few round trips); a failure is reported for the first
    /// file, in order, that failed.
    func proveStored(_ files: [some StoredObjectFacts], localFiles: [String: String], trustStored: Bool) async throws {
        if let failure = try await proofs(of: files, localFiles: localFiles, trustStored: trustStored).lazy.compactMap({ $0 }).first {
            throw failure
        }
    }

    /// Proves each of `files` (`Storage.proveContent`), `concurrentProofs` at a time, saying
    /// where `--trust-stored` accepted a size; returns, in order, each file's failure or nil.
    func proofs(of files: [some StoredObjectFacts], localFiles: [String: String], trustStored: Bool) async throws -> [(any Error)?] {
        var digests: [SHA256Digest] = []
        for file in files {
            guard let digest = SHA256Digest(hex: file.sha256) else {
                throw ModelCastError.targetState("the history names \(storage.location)/\(file.key) with an invalid sha256 '\(file.sha256)'")
            }
            digests.append(digest)
        }
        let storage = self.storage
        let proofs = await boundedMap(Array(zip(files, digests)), concurrency: Self.concurrentProofs, nonThrowing: { file, digest -> Result<ContentProof, any Error> in
            do {
                return .success(try await storage.proveContent(file.key, size: file.size, sha256: digest, localFile: localFiles[file.key], trustStored: trustStored))
            } catch {
                return .failure(error)
            }
        })
        return zip(files, proofs).map { file, proof in
            switch proof {
            case .success(.trustedSize):
                log("warning: \(storage.location)/\(file.key) has no SHA-256 checksum in the store; --trust-stored accepted its size without reading it")
                return nil
            case .success: return nil
            case .failure(let error): return error
            }
        }
    }

    /// Stored objects proven at once by `proveStored`.
    static let concurrentProofs = 8
}

/// What proving a stored object needs: its key, size and SHA-256 as a release names them.
protocol StoredObjectFacts: Sendable {
    var key: String { get }
    var size: Int64 { get }
    var sha256: String { get }
}

extension ReleaseFile: StoredObjectFacts {}
extension ReleaseObject: StoredObjectFacts {}

extension StorageError {
    /// The key the error is about, where it names one.
    var key: String? {
        switch self {
        case .conflict(let key, _, _, _, _), .preconditionFailed(let key, _, _), .tooLarge(let key, _, _), .missing(let key),
             .contentMismatch(let key, _, _, _, _, _):
            return key
        case .invalidKey: return nil
        }
    }
}
