import Foundation

/// What a target holds for one manifest key: the history records, the live manifest,
/// and which record is live. Publish, rollback, resign and prune all start from it.
package struct TargetState: Sendable {
    /// Every history record, oldest first.
    package let history: [Release]
    /// Each record's object as stored (by sequence), for the hosting files.
    var recordObjects: [Int64: ObjectMetadata] = [:]
    /// The live manifest as the store reports it (its etag guards the replace), or nil.
    package let manifestInfo: ObjectInfo?
    /// The live manifest's bytes, or nil when there is none.
    package let manifestData: Data?
    /// The live detached signature (`manifest.json.minisig`), or nil when unsigned.
    package let signatureData: Data?
    /// The record whose rendering is the live manifest. A publish that failed after
    /// writing its record never went live and is never this record.
    package let liveRecord: Release?

    /// The sequence the live manifest carries: its own `sequence` (modelcast format) or
    /// the one its detached signature's trusted comment binds, whichever is higher.
    package internal(set) var liveManifestSequence: Int64? = nil
    /// The live manifest read as a release, when it is in modelcast format.
    var liveManifestRelease: Release? = nil

    /// The release devices see now. A manifest matching no record (a record lost, or
    /// written by other means) is read as it is when it is in modelcast format, and
    /// otherwise counts as the newest record.
    package var live: Release? { liveRecord ?? liveManifestRelease ?? (manifestData == nil ? nil : history.last) }

    /// True when a live manifest exists that no history record explains: what devices
    /// have is not in the history, so a publish must be told to continue from it.
    package var liveIsUnexplained: Bool { manifestData != nil && liveRecord == nil }

    /// The key id (hex) that signed the live manifest: its detached signature's, else its
    /// inline one's; nil when unsigned or unreadable.
    package var liveSigningKeyID: String? { liveSignature?.keyID.hex }

    /// The live manifest's signature: its detached one, else its inline one; nil when
    /// unsigned or unreadable (`liveIsSigned` tells the two apart).
    package var liveSignature: MinisignSignature? {
        // try?: unreadable reads as unsigned here (see `liveIsSigned`).
        liveSignatureFiles.lazy.compactMap { try? MinisignSignature(fileContents: $0) }.first
    }

    /// True when the live manifest carries a signature, readable or not.
    package var liveIsSigned: Bool { !liveSignatureFiles.isEmpty }

    private var liveSignatureFiles: [String] {
        var files: [String] = []
        if let signature = signatureData { files.append(String(decoding: signature, as: UTF8.self)) }
        if let manifest = manifestData, let inline = InlineSignature.split(manifest) {
            // try?: an unreadable inline member counts as a signature file that does not parse.
            files.append((try? InlineSignature.signatureFile(fromMember: inline.member)) ?? "")
        }
        return files
    }

    /// The sequence the next record gets: above every record and above whatever the
    /// live manifest and its signature have shown devices, so it never goes back.
    package var nextSequence: Int64 { max(history.last?.sequence ?? 0, liveManifestSequence ?? 0) + 1 }

    /// Where the history came from, and what a write must do with the index.
    package internal(set) var index = IndexState()
    /// Every record's bytes and metadata, oldest first (what the next index holds).
    var indexEntries: [HistoryIndex.Entry] = []
    /// The manifest key this history belongs to.
    var indexManifestKey = "manifest.json"

    /// How a command reads the history.
    package enum HistoryRead: Sendable {
        /// The index, checked (see `HistoryIndex`), with every record read only when it fails.
        case indexed
        /// Every record, in parallel (`history`, `prune`, `history --rebuild-index`).
        case all
    }

    /// Reads the history and the live manifest of `manifestKey`.
    package static func load(from storage: any Storage, manifestKey: String, reading: HistoryRead = .indexed) async throws -> TargetState {
        let indexKey = HistoryIndex.key(manifestKey: manifestKey)
        var index = IndexState()
        var stored: HistoryIndex?
        do {
            if let (data, info) = try await storage.getWithInfo(indexKey, limit: HistoryIndex.sizeLimit) {
                index.etag = info.etag ?? ""
                stored = try HistoryIndex.decode(data, manifestKey: manifestKey, source: "\(storage.location)/\(indexKey)")
            } else {
                index.problem = "there is no history index at \(storage.location)/\(indexKey)"
            }
        } catch let problem as IndexProblem {
            index.problem = "\(storage.location)/\(indexKey) cannot be used: \(problem)"
        } catch StorageError.tooLarge(_, let size, _) {
            index.problem = "\(storage.location)/\(indexKey) is \(size) bytes, over the \(HistoryIndex.sizeLimit) read back"
            index.etag = try await storage.head(indexKey)?.etag ?? ""
        }
        let live = try await LiveObjects.read(storage, manifestKey: manifestKey)
        if reading == .indexed, let stored {
            // Records the index does not name yet are read and join it.
            let entries = stored.entries + (try await recordsAfter(stored.entries.last?.record.sequence ?? 0, storage: storage, manifestKey: manifestKey))
            let state = TargetState(entries: entries, live: live)
            if let problem = try await liveRecordProblem(state, storage: storage, manifestKey: manifestKey) {
                index.problem = problem
            } else {
                var state = state
                state.index = index
                state.indexManifestKey = manifestKey
                return state
            }
        }
        var state = TargetState(entries: try await readAllRecords(storage, manifestKey: manifestKey), live: live)
        if let stored, index.problem == nil {
            let all = state.indexEntries.map { [$0.record.sequence: $0.metadata.sha256] }
            let named = stored.entries.map { [$0.record.sequence: $0.metadata.sha256] }
            if all != named { index.problem = "\(storage.location)/\(indexKey) does not name the records that are there (\(named.count) named, \(all.count) stored)" }
        }
        state.index = index
        state.indexManifestKey = manifestKey
        return state
    }

    /// A state from bytes read without a store (a manifest URL's records, fetched one by
    /// one): `records` are history records as served, each with the sequence of the key it
    /// was read from, in any order (`source` names each).
    package static func assemble(records: [(sequence: Int64, data: Data, source: String)], manifest: Data?, signature: Data?) throws -> TargetState {
        let entries = try records.map { try HistoryIndex.entry(decoding: $0.data, source: $0.source, sequence: $0.sequence) }
            .sorted { $0.record.sequence < $1.record.sequence }
        return TargetState(entries: entries, live: LiveObjects(info: nil, manifest: manifest, signature: signature))
    }

    /// Records above `sequence`, found by asking for each next key until one is absent
    /// (one request when the index is current).
    private static func recordsAfter(_ sequence: Int64, storage: any Storage, manifestKey: String) async throws -> [HistoryIndex.Entry] {
        var found: [HistoryIndex.Entry] = []
        var next = sequence + 1
        while true {
            let key = TargetLayout.historyKey(manifestKey: manifestKey, sequence: next)
            guard let data = try await storage.get(key, limit: TargetLayout.recordLimit) else { return found }
            found.append(try HistoryIndex.entry(decoding: data, source: "\(storage.location)/\(key)", sequence: next))
            next += 1
        }
    }

    /// Why the index's account of the live release cannot be trusted, or nil: the record
    /// the live manifest renders must be stored with the index's bytes, and a live
    /// manifest the index cannot explain is checked against every record.
    private static func liveRecordProblem(_ state: TargetState, storage: any Storage, manifestKey: String) async throws -> String? {
        if state.liveIsUnexplained { return "the live manifest matches no record the history index names" }
        guard let live = state.liveRecord, let entry = state.indexEntries.last(where: { $0.record.sequence == live.sequence }) else { return nil }
        let key = TargetLayout.historyKey(manifestKey: manifestKey, sequence: live.sequence)
        guard let data = try await storage.get(key, limit: TargetLayout.recordLimit) else {
            return "the history index names \(storage.location)/\(key), which is missing"
        }
        if try SHA256Hasher.digest(data) != entry.metadata.sha256 {
            return "\(storage.location)/\(key) is not the record the history index holds"
        }
        return nil
    }

    /// Proves `record` is stored with the bytes the history holds (read from the index,
    /// it is read again from its own key): a command about to act on an older record
    /// never trusts the index alone.
    package func confirmStored(_ record: Release, storage: any Storage) async throws {
        guard let entry = indexEntries.last(where: { $0.record.sequence == record.sequence }) else { return }
        let key = TargetLayout.historyKey(manifestKey: indexManifestKey, sequence: record.sequence)
        let data = try await storage.get(key, limit: TargetLayout.recordLimit)
        guard let data, try SHA256Hasher.digest(data) == entry.metadata.sha256 else {
            throw ModelCastError.targetState("\(storage.location)/\(key) is \(data == nil ? "missing" : "not the record the history index holds"): run `modelcast history \(storage.location) --rebuild-index` (with the same --manifest-key), then try again")
        }
    }

    /// Every record under the manifest key's history prefix, read eight at a time.
    static func readAllRecords(_ storage: any Storage, manifestKey: String) async throws -> [HistoryIndex.Entry] {
        let prefix = TargetLayout.historyPrefix(manifestKey: manifestKey)
        let keys = try await storage.list(prefix: prefix).compactMap { key -> (key: String, sequence: Int64)? in
            let name = key.dropFirst(prefix.count)
            guard name.hasSuffix(".json"), !name.contains("/"), let sequence = Int64(name.dropLast(5)) else { return nil }
            return (key, sequence)
        }
        let entries = try await boundedMap(keys, concurrency: 8) { item -> HistoryIndex.Entry? in
            guard let data = try await storage.get(item.key, limit: TargetLayout.recordLimit) else { return nil }
            return try HistoryIndex.entry(decoding: data, source: "\(storage.location)/\(item.key)", sequence: item.sequence)
        }
        return entries.compactMap { $0 }.sorted { $0.record.sequence < $1.record.sequence }
    }

    /// The records that went live, oldest first. A record never went live when its
    /// publish stopped before the manifest write: the next record then replaced an
    /// older one, skipping it (or a record newer than the live one, not yet replaced).
    /// This needs no record but the later one, so it survives pruning.
    package var wentLive: [Release] {
        guard let live else { return [] }
        let sequences = history.map(\.sequence)
        var skipped = Set<Int64>()
        for record in history {
            // Records written before `replaces` existed name their predecessor as the rollback;
            // a record with neither was published when nothing was live.
            let previous = record.replaces ?? record.rollback?.sequence ?? 0
            for sequence in sequences where sequence > previous && sequence < record.sequence { skipped.insert(sequence) }
        }
        return history.filter { $0.sequence <= live.sequence && !skipped.contains($0.sequence) }
    }

    /// The base URL the records' download URLs were built from (their own objects' URLs,
    /// not their rollback sections', which may name an earlier base).
    package var baseURL: String? {
        for record in ([live].compactMap { $0 } + history.reversed()) {
            for object in record.objects(in: [.release]) {
                let suffix = "/" + URLParts.percentEncodedPath(object.key)
                if object.url.hasSuffix(suffix) { return String(object.url.dropLast(suffix.count)) }
            }
        }
        return nil
    }
}

extension TargetState {
    fileprivate init(entries: [HistoryIndex.Entry], live: LiveObjects) {
        let history = entries.map(\.record)
        let unsigned = live.manifest.map(InlineSignature.strip)
        let liveRecord = unsigned.flatMap { bytes in history.last { TargetLayout.rendering(of: $0) == bytes } }
        // try?: a live manifest modelcast cannot read, or an unreadable signature, is no record's (reported by the state's users).
        let liveManifestRelease = unsigned.flatMap { try? Release.decode($0, source: "manifest") }
        let signedSequence = live.signature.flatMap { try? MinisignSignature(fileContents: String(decoding: $0, as: UTF8.self)) }
            .flatMap { TrustedComment(parsing: $0.trustedComment)?.sequence }
        let sequences = [liveRecord?.sequence, liveManifestRelease?.sequence, signedSequence].compactMap { $0 }
        self.init(
            history: history, manifestInfo: live.info, manifestData: live.manifest, signatureData: live.manifest == nil ? nil : live.signature, liveRecord: liveRecord,
            liveManifestSequence: sequences.max(), liveManifestRelease: liveManifestRelease)
        indexEntries = entries
        recordObjects = Dictionary(uniqueKeysWithValues: entries.map { ($0.record.sequence, $0.metadata) })
    }

}

/// The live manifest and its detached signature, as stored.
struct LiveObjects {
    let info: ObjectInfo?
    let manifest: Data?
    let signature: Data?

    /// The manifest's bytes and its etag come from one answer, so the etag a later
    /// replace is conditional on names exactly the bytes read.
    static func read(_ storage: any Storage, manifestKey: String) async throws -> LiveObjects {
        let manifest = try await storage.getWithInfo(manifestKey, limit: TargetLayout.recordLimit)
        // Read even without a manifest: a signature left behind still witnesses the
        // sequence devices have seen (the next publish goes above it).
        let signature = try await storage.get(SignedManifest.signatureKey(for: manifestKey), limit: SignedManifest.maximumSignatureSize)
        return LiveObjects(info: manifest?.info, manifest: manifest?.data, signature: signature)
    }
}

/// What a command found of the history index (`HistoryIndex`).
package struct IndexState: Sendable {
    /// The index object's etag as read ("" when there is none): a write must find it unchanged.
    package var etag = ""
    /// Why the index was not used (every record was read instead), or nil.
    package var problem: String?
}

/// One release in a target's history, for `modelcast history`.
package struct HistoryEntry: Codable, Sendable, Equatable {
    package enum State: String, Codable, Sendable {
        /// The live manifest is this record.
        case live
        /// It was live once.
        case wentLive = "went live"
        /// Its publish stopped before the manifest was written.
        case neverLive = "never live"
        /// Newer than the live manifest: a publish under way, or one that failed last.
        case pending
    }

    /// What the release did, read from the records (HistoryActions).
    package enum Action: String, Codable, Sendable {
        case publish, rollout
        case rolloutHalt = "rollout-halt"
        case rolloutComplete = "rollout-complete"
        case rollback, promote
        /// The same files as the release it replaced: a resign, or a publish of nothing new.
        case republish
    }

    /// A staged rollout the release carries.
    package struct RolloutFacts: Codable, Sendable, Equatable {
        /// The candidate's share when the release was written (a schedule moves it on).
        package let percent: Double
        package let halted: Bool
        package let scheduled: Bool
        /// The release the other devices stay on.
        package let fallbackSequence: Int64?

        enum CodingKeys: String, CodingKey {
            case percent, halted, scheduled
            case fallbackSequence = "fallback_sequence"
        }
    }

    package let sequence: Int64
    package let publishedAt: String
    package let expiresAt: String?
    package let state: State
    /// Model name → version.
    package let versions: [String: String]
    /// Sequence of the release devices fall back to from this one.
    package let rollbackSequence: Int64?
    package var action: Action?
    /// The action in words: "rollout halted: every device on sequence 1".
    package var detail: String?
    package var rollout: RolloutFacts?
    /// Model name → its licence, download conditions and storage, for the models that have any.
    package var policies: [String: ModelPolicyFacts]?

    enum CodingKeys: String, CodingKey {
        case sequence, state, versions, action, detail, rollout, policies
        case publishedAt = "published_at", expiresAt = "expires_at", rollbackSequence = "rollback_sequence"
    }
}

/// `modelcast history --json`: the channel and its releases, newest first.
package struct HistoryReport: Codable, Sendable {
    package let target: String
    package let channel: String
    package let manifestKey: String
    package let releases: [HistoryEntry]

    package init(target: String, channel: String, manifestKey: String, releases: [HistoryEntry]) {
        self.target = target
        self.channel = channel
        self.manifestKey = manifestKey
        self.releases = releases
    }

    enum CodingKeys: String, CodingKey {
        case target, channel, releases
        case manifestKey = "manifest_key"
    }
}

extension TargetState {
    /// Every record with what became of it and what it did, newest first. `otherChannels`
    /// are the other channels' records (channel → records), to name promotions.
    package func entries(otherChannels: [String: [Release]] = [:]) -> [HistoryEntry] {
        let went = Set(wentLive.map(\.sequence))
        let liveSequence = liveRecord?.sequence
        let actions = HistoryActions(history: history, otherChannels: otherChannels)
        return history.reversed().map { record in
            let state: HistoryEntry.State
            if record.sequence == liveSequence { state = .live }
            else if went.contains(record.sequence) { state = .wentLive }
            else if let live, record.sequence > live.sequence { state = .pending }
            else { state = .neverLive }
            var entry = HistoryEntry(
                sequence: record.sequence, publishedAt: record.publishedAt, expiresAt: record.expiresAt, state: state,
                versions: record.unitsByLabel.mapValues(\.version), rollbackSequence: record.rollback?.sequence)
            let (action, detail) = actions.describe(record)
            entry.action = action
            entry.detail = detail
            entry.policies = ModelPolicyFacts.of(record.models)
            entry.rollout = record.rollout.map {
                HistoryEntry.RolloutFacts(percent: Double($0.basisPoints) / 100, halted: $0.isHalted, scheduled: $0.schedule != nil,
                                          fallbackSequence: record.rollback?.sequence)
            }
            return entry
        }
    }

    /// `entries()` without other channels.
    package var entries: [HistoryEntry] { entries() }
}
