import Foundation

/// What `prune` removes.
package struct PruneRequest: Sendable {
    /// How many of the newest distinct releases that went live keep their objects and
    /// records (the live one included; re-signed copies of one release count once).
    package var keep: Int
    package var manifestKey: String
    package var dryRun: Bool
    package var templatesDirectory: String?
    /// On S3, also abort multipart uploads started this long ago or more (nil: leave them).
    package var abortUploadsOlderThan: TimeInterval?
    /// Reports the deleting of artifacts, by the bytes they held; nil reports nothing.
    package var progress: ProgressFactory?

    package init(keep: Int, manifestKey: String = "manifest.json", dryRun: Bool = false, templatesDirectory: String? = nil,
                abortUploadsOlderThan: TimeInterval? = nil, progress: ProgressFactory? = nil) {
        self.progress = progress
        self.keep = keep
        self.manifestKey = manifestKey
        self.dryRun = dryRun
        self.templatesDirectory = templatesDirectory
        self.abortUploadsOlderThan = abortUploadsOlderThan
    }
}

/// What a prune did (or, with dry run, would do).
package struct PruneReport: Codable, Sendable {
    package let target: String
    package let dryRun: Bool
    /// Sequences whose records and objects stay.
    package let keptSequences: [Int64]
    /// Objects deleted (or to delete), artifacts first, then history records.
    package let deleted: [String]
    /// Bytes those artifacts held.
    package let deletedBytes: Int64
    /// Multipart uploads aborted (S3), as `key (upload id)`.
    package let abortedUploads: [String]
    package var requests: [String: Int]?

    enum CodingKeys: String, CodingKey {
        case target, deleted, requests
        case dryRun = "dry_run", keptSequences = "kept_sequences", deletedBytes = "deleted_bytes", abortedUploads = "aborted_uploads"
    }
}

/// `prune`: deletes what superseded releases of one channel name and nothing else does.
package struct Pruner: TargetWriting {
    package let writer: TargetWriter

    package init(writer: TargetWriter) {
        self.writer = writer
    }

    /// Deletes the objects and history records of releases outside the kept window of one
    /// channel. It never deletes an object the live manifest, its rollback target, any kept
    /// release or any record of another channel names, nor a record newer than the live one
    /// (a publish may be under way).
    /// The hosting files are rewritten first; deleting is the last step.
    package func prune(_ request: PruneRequest) async throws -> PruneReport {
        guard request.keep >= 1 else {
            throw ModelCastError.usage("--keep \(request.keep) would delete the live release: keep at least 1")
        }
        let lock = try writer.lockTarget(dryRun: request.dryRun)
        defer { withExtendedLifetime(lock) {} }
        let plan = try await planPrune(request)
        var deleted = (artifacts: plan.artifacts, bytes: plan.bytes)
        if !request.dryRun { deleted = try await applyPrune(plan, request: request) }
        return PruneReport(
            target: storage.location, dryRun: request.dryRun, keptSequences: plan.keptRecords.map(\.sequence),
            deleted: deleted.artifacts + plan.records, deletedBytes: deleted.bytes,
            abortedUploads: plan.uploads.map { "\($0.key) (\($0.uploadID))" }, requests: storage.requestCounts)
    }

    /// What a prune deletes, worked out (the target read, nothing written) before it deletes anything.
    private struct PrunePlan {
        let state: TargetState
        let live: Release
        /// The sequences whose records and objects stay, and those records.
        let kept: Set<Int64>
        let keptRecords: [Release]
        /// The records outside the window, and their keys.
        let dropped: [Release]
        let records: [String]
        /// The target's other channels, as read.
        let others: [TargetWriter.ChannelState]
        /// The stored objects only the dropped records name, and their sizes.
        let artifacts: [String]
        let sizes: [Int64]
        let hosting: HostingTarget?
        let uploads: [PendingUpload]

        /// Bytes the artifacts hold.
        var bytes: Int64 { sizes.reduce(0, +) }
    }

    /// Reads the target and works out what `request` deletes.
    private func planPrune(_ request: PruneRequest) async throws -> PrunePlan {
        let state = try await writer.loadForWriting(manifestKey: request.manifestKey, reading: .all, dryRun: request.dryRun)
        guard state.manifestData != nil else {
            throw ModelCastError.targetState("no manifest at \(storage.location)/\(request.manifestKey): prune needs the live manifest to know what must stay")
        }
        guard let live = state.liveRecord, let baseURL = state.baseURL else {
            throw ModelCastError.targetState("the live manifest at \(storage.location)/\(request.manifestKey) matches no history record (edited by hand?): prune cannot tell what it needs, so it deletes nothing")
        }
        let kept = Self.sequencesToKeep(state: state, live: live, keep: request.keep)
        let keptRecords = state.history.filter { kept.contains($0.sequence) }
        let dropped = state.history.filter { !kept.contains($0.sequence) }
        // Artifacts are shared by every channel: what any other channel's history names
        // stays (its own prune decides when its records go).
        let others = try await writer.otherChannels(besides: request.manifestKey)
        let found = try await storedObjects(namedBy: dropped, notBy: [live] + keptRecords + others.flatMap(\.state.history))
        let records = dropped.map { TargetLayout.historyKey(manifestKey: request.manifestKey, sequence: $0.sequence) }
        let hosting = try HostingTarget(storage: storage, manifestKey: request.manifestKey, baseURL: baseURL, templatesDirectory: request.templatesDirectory)
        let uploads = try await staleUploads(olderThan: request.abortUploadsOlderThan)
        return PrunePlan(
            state: state, live: live, kept: kept, keptRecords: keptRecords, dropped: dropped, records: records, others: others,
            artifacts: found.keys, sizes: found.sizes, hosting: hosting, uploads: uploads)
    }

    /// The sequences a prune keeps: the newest `keep` releases that went live, the live one,
    /// its rollback target, and every record newer than the live one.
    private static func sequencesToKeep(state: TargetState, live: Release, keep: Int) -> Set<Int64> {
        // The window counts releases, not records: re-signs (and rollbacks) of the same
        // content are one release, of which the newest record stays.
        var window: [Release] = []
        for record in state.wentLive.reversed() where !window.contains(where: { $0.sameContent(as: record) }) {
            window.append(record)
            if window.count == keep { break }
        }
        var kept = Set(window.map(\.sequence))
        kept.insert(live.sequence)
        if let target = live.rollback?.sequence { kept.insert(target) }
        for record in state.history where record.sequence > live.sequence { kept.insert(record.sequence) }
        return kept
    }

    /// The objects `dropped` name and no release of `protected` does, in key order, with
    /// their sizes: those still stored (a HEAD of each).
    private func storedObjects(namedBy dropped: [Release], notBy protected: [Release]) async throws -> (keys: [String], sizes: [Int64]) {
        var protectedKeys = Set<String>()
        for record in protected { protectedKeys.formUnion(record.referencedKeys) }
        var candidates = Set<String>()
        for record in dropped { candidates.formUnion(record.referencedKeys) }
        var keys: [String] = []
        var sizes: [Int64] = []
        let storage = self.storage
        let found = try await boundedMap(candidates.subtracting(protectedKeys).sorted(), concurrency: 8) { key in
            (key, try await storage.head(key)?.size)
        }
        for (key, size) in found {
            guard let size else { continue }
            keys.append(key)
            sizes.append(size)
        }
        return (keys, sizes)
    }

    /// Carries out `plan`: the index and hosting files first, then the artifacts, stale
    /// announcements, the records, and stale uploads; then checks the live release is
    /// whole. Returns the artifacts removed and the bytes they held.
    private func applyPrune(_ plan: PrunePlan, request: PruneRequest) async throws -> (artifacts: [String], bytes: Int64) {
        let state = plan.state
        // The index goes first too: it names only the kept records, so an interrupted
        // prune leaves records it does not name, which the next full read finds.
        try await writer.writeIndex(state.indexEntries.filter { plan.kept.contains($0.record.sequence) }, manifestKey: request.manifestKey, ifMatch: state.index.etag)
        if let hosting = plan.hosting {
            // The new state first: hosting files that no longer list what is about to go.
            try await writer.writeHostingFiles(
                hosting, records: plan.keptRecords, recordObjects: state.recordObjects,
                live: try writer.liveHostedObjects(state: state, manifestKey: request.manifestKey), excluding: Set(plan.artifacts), others: plan.others)
        }
        let progress = plan.artifacts.isEmpty ? nil : request.progress?("deleting \(plan.artifacts.count) object\(plan.artifacts.count == 1 ? "" : "s")", plan.bytes)
        defer { progress?.finish() }
        let removed = try await removeArtifacts(of: plan, manifestKey: request.manifestKey, progress: progress)
        // Announcements a killed run left behind.
        for key in try await storage.list(prefix: Removals.prefix) where Removals.isStale(key) {
            try await storage.delete(key)
        }
        // Records last: an interrupted prune still knows what it was removing.
        for key in plan.records { try await storage.delete(key) }
        for record in plan.dropped {
            for key in TargetLayout.keptSignatureKeys(manifestKey: request.manifestKey, sequence: record.sequence) { try await storage.delete(key) }
        }
        if let multipart = storage.capabilities.multipart {
            for upload in plan.uploads { try await multipart.abort(upload) }
        }
        // Everything the live manifest names must still be there.
        for key in plan.live.referencedKeys.sorted() where try await storage.head(key) == nil {
            throw ModelCastError.io(operation: "prune", path: "\(storage.location)/\(key)", reason: "an object the live manifest names is missing after pruning")
        }
        return removed
    }

    /// Removes `plan`'s artifacts, reporting each one's bytes to `progress`. Returns those
    /// removed and the bytes they held.
    private func removeArtifacts(of plan: PrunePlan, manifestKey: String, progress: (any ProgressReporter)?) async throws -> (artifacts: [String], bytes: Int64) {
        // Where runs write at the same time, a publish may have found one of these
        // objects and be about to name it again: `removeUnnamed` keeps any a record
        // other than the dropped ones names by the time it removes them.
        let sizeOf = Dictionary(zip(plan.artifacts, plan.sizes), uniquingKeysWith: { first, _ in first })
        var known: [String: Set<String>] = [:]
        for record in plan.state.history {
            known[TargetLayout.historyKey(manifestKey: manifestKey, sequence: record.sequence)] = record.referencedKeys
        }
        let outcome = try await writer.remover.removeUnnamed(plan.artifacts, ignoringRecords: Set(plan.records), known: known) { key in
            progress?.advance(by: Int(sizeOf[key] ?? 0))
        }
        for kept in outcome.kept { log("warning: left \(kept.key) in place: \(kept.reason)") }
        return (outcome.removed, outcome.removed.reduce(0) { $0 + (sizeOf[$1] ?? 0) })
    }

    /// Multipart uploads on an S3 target started at least `age` ago.
    private func staleUploads(olderThan age: TimeInterval?) async throws -> [PendingUpload] {
        guard let age, let multipart = storage.capabilities.multipart else { return [] }
        return try await multipart.abandoned(Date().addingTimeInterval(-age))
    }

}
