import Foundation
import ModelCastFormat
import NIOConcurrencyHelpers

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

/// Applies a `CommitPlan` (`Committer`): writes it in order — artifacts, history record,
/// index, hosting files, signature, manifest last — keeping an undo journal until the
/// manifest is written.
struct CommitApplier: TargetWriting {
    let writer: TargetWriter

    /// Executes `plan`: artifacts (each checked), the writer's `beforeManifest` gate, the
    /// history record, the hosting files, the signature, and the manifest last. Before the
    /// manifest write, a failure undoes what this run did (removing only keys it saw itself
    /// create); after it, nothing is removed. An undo step that fails is reported in the error.
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
        journal.record(.removeStored, "remove the objects this run stored") {
            // Once this run's history record is written, an identical run may have adopted it
            // (same key, same bytes) and every object it names: on a store whose writers do
            // not take turns, nothing this run wrote is removed then (`leftForPrune`).
            guard !created.recordWritten || self.storage.capabilities.writersTakeTurns else {
                self.log("warning: \(Self.leftForPrune(created.keys, record: plan.historyKey))")
                return
            }
            let outcome = try await self.writer.remover.removeUnnamed(created.keys)
            for kept in outcome.kept { self.log("warning: left \(kept.key) in place: \(kept.reason)") }
        }
        do {
            objects += try await storeArtifacts(plan, created: created, consumed: consumed)
            if let beforeManifest = writer.beforeManifest {
                // E.g. a full verify through the public URL: the manifest goes live only if it passes.
                try await beforeManifest(plan.manifestData)
            }
            Interrupts.shared.beginCommit()
            committing = true
            objects.append(try await writeRecords(plan, state: state, created: created, journal: journal))
            try await rewriteHostingFiles(for: plan, state: state, created: created, journal: journal)
            if let signature = try await replaceSignature(plan, state: state, journal: journal) { objects.append(signature) }
            if let list = try await replaceSignatureList(plan, journal: journal) { objects.append(list) }
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
        return PublishReport(plan, state: state, objects: objects, warnings: plan.warnings.all, storage: storage)
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
            if put != .created { try await ObjectProofs.checkStored(artifact.key, expected: artifact.metadata, storage: storage) }
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
            journal.record(.removeStored, "remove \(plan.historyKey)") { try await self.storage.delete(plan.historyKey) }
        }
        let record = PublishReport.Object(key: plan.historyKey, role: "history", outcome: "created", size: plan.historyMetadata.size, sha256: plan.historyMetadata.sha256.hex)
        if let signature = plan.signature {
            // The release's signature is kept beside its record before the live one
            // changes: a run stopped between the signature and the manifest writes
            // leaves what the next command needs to put the live pair right.
            let keptKey = TargetLayout.signatureRecordKey(manifestKey: plan.settings.manifestKey, sequence: plan.release.sequence)
            let kept = try ObjectMetadata(of: signature.data, cacheControl: CachePolicy.immutable, contentType: SignedManifest.signatureContentType)
            if try await storage.putIfAbsent(keptKey, data: signature.data, metadata: kept) == .created, takesTurns {
                journal.record(.removeStored, "remove \(keptKey)") { try await self.storage.delete(keptKey) }
            }
        }
        try await writeIndex(adding: plan, state: state, journal: journal, restoring: takesTurns)
        // This run's record is written: a run removing objects from here on sees it.
        // What the release names that this run did not store must have outlived any
        // removal announced before; what the live record names needs no check (no run
        // removes what a record names, and the live record stays while it is live, as
        // this run's manifest write requires), so an unchanged model costs nothing.
        try await writer.remover.confirmNotRemoved(plan.release.referencedKeys.subtracting(created.keys)
            .subtracting(state.liveRecord?.referencedKeys ?? []))
        return record
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
        try await writer.writeIndex(before + [added], manifestKey: manifestKey, ifMatch: state.index.etag)
        guard restoring else { return }
        journal.record(.restorePrevious, "restore \(HistoryIndex.key(manifestKey: manifestKey))") {
            guard !state.index.etag.isEmpty else { return try await self.storage.delete(HistoryIndex.key(manifestKey: manifestKey)) }
            try await self.writer.writeIndex(before, manifestKey: manifestKey, ifMatch: nil)
        }
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
        if let list = plan.signatureList {
            // Written after the hosting files (`replaceSignatureList`), so named here.
            hosted.insert(HostedObject(key: settings.signatureListKey, role: .signature, metadata: list.metadata), at: hosted.count - 1)
            let keptKey = TargetLayout.signatureListRecordKey(manifestKey: settings.manifestKey, sequence: plan.release.sequence)
            hosted.insert(HostedObject(key: keptKey, role: .history, metadata: try ObjectMetadata(
                of: list.data, cacheControl: CachePolicy.immutable, contentType: SignedManifest.signatureContentType)), at: 0)
        }
        var recordObjects = state.recordObjects
        recordObjects[plan.release.sequence] = plan.historyMetadata
        journal.record(.restorePrevious, "restore the hosting files") {
            try await self.writer.writeHostingFiles(hosting, records: state.history, recordObjects: state.recordObjects,
                                                    live: try self.writer.liveHostedObjects(state: state, manifestKey: settings.manifestKey))
        }
        for warning in try await writer.writeHostingFiles(hosting, records: state.history + [plan.release], recordObjects: recordObjects, live: hosted,
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
        journal.record(.restorePrevious, "restore \(settings.signatureKey)") { try await self.restoreSignature(state.signatureData, settings: settings) }
        try await storage.replace(settings.signatureKey, data: signature.data, metadata: signature.metadata, ifMatch: nil)
        return .init(key: settings.signatureKey, role: "signature", outcome: state.signatureData == nil ? "created" : "replaced", size: signature.metadata.size, sha256: signature.metadata.sha256.hex)
    }

    /// Replaces `manifest.json.sigs` (several signers) just after the `.minisig`, with the
    /// release's copy kept beside its record (`manifests/N.json.sigs`), as the single
    /// signature is; undone like it if the manifest write fails.
    private func replaceSignatureList(_ plan: CommitPlan, journal: UndoJournal) async throws -> PublishReport.Object? {
        guard let list = plan.signatureList else { return nil }
        let settings = plan.settings
        let keptKey = TargetLayout.signatureListRecordKey(manifestKey: settings.manifestKey, sequence: plan.release.sequence)
        let kept = try ObjectMetadata(of: list.data, cacheControl: CachePolicy.immutable, contentType: SignedManifest.signatureContentType)
        if try await storage.putIfAbsent(keptKey, data: list.data, metadata: kept) == .created, storage.capabilities.writersTakeTurns {
            journal.record(.removeStored, "remove \(keptKey)") { try await self.storage.delete(keptKey) }
        }
        let previous = try await storage.get(settings.signatureListKey, limit: MinisignSignatureList.maxBytes)
        journal.record(.restorePrevious, "restore \(settings.signatureListKey)") {
            if let previous {
                try await self.storage.replace(settings.signatureListKey, data: previous, metadata: try ObjectMetadata(
                    of: previous, cacheControl: settings.manifestCacheControl, contentType: SignedManifest.signatureContentType), ifMatch: nil)
            } else {
                try await self.storage.delete(settings.signatureListKey)
            }
        }
        try await storage.replace(settings.signatureListKey, data: list.data, metadata: list.metadata, ifMatch: nil)
        return .init(key: settings.signatureListKey, role: "signature", outcome: previous == nil ? "created" : "replaced", size: list.metadata.size, sha256: list.metadata.sha256.hex)
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
                let leftovers = await journal.undoOnly(.restorePrevious)
                leftovers.forEach { warn($0) }
                throw CommitError("the manifest was not replaced (\(error)); the previous manifest is still live, and this release's objects stay in place for the next attempt" + (leftovers.isEmpty ? "" : "; " + leftovers.joined(separator: "; ")), cause: error)
            } else {
                // Another run went live first. This run's signature may have replaced the
                // one of the manifest now live: put that one back from its kept copy (the
                // repair every writing command makes) so devices see a matching pair.
                if plan.signature != nil {
                    do { _ = try await writer.loadForWriting(manifestKey: settings.manifestKey, dryRun: false) } catch let repairError {
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
}
