import Foundation

/// What a target holds for one manifest key: the history records, the live manifest,
/// and which record is live. Publish, rollback, resign and prune all start from it.
public struct TargetState: Sendable {
    /// Every history record, oldest first.
    public let history: [Release]
    /// Each record's object as stored (by sequence), for the hosting files.
    var recordObjects: [Int64: ObjectMetadata] = [:]
    /// The live manifest as the store reports it (its etag guards the replace), or nil.
    public let manifestInfo: ObjectInfo?
    /// The live manifest's bytes, or nil when there is none.
    public let manifestData: Data?
    /// The live detached signature (`manifest.json.minisig`), or nil when unsigned.
    public let signatureData: Data?
    /// The record whose rendering is the live manifest. A publish that failed after
    /// writing its record never went live and is never this record.
    public let liveRecord: Release?

    /// The sequence the live manifest carries: its own `sequence` (modelcast format) or
    /// the one its detached signature's trusted comment binds, whichever is higher.
    public internal(set) var liveManifestSequence: Int64? = nil
    /// The live manifest read as a release, when it is in modelcast format.
    var liveManifestRelease: Release? = nil

    /// The release devices see now. A manifest matching no record (a record lost, or
    /// written by other means) is read as it is when it is in modelcast format, and
    /// otherwise counts as the newest record.
    public var live: Release? { liveRecord ?? liveManifestRelease ?? (manifestData == nil ? nil : history.last) }

    /// True when a live manifest exists that no history record explains: what devices
    /// have is not in the history, so a publish must be told to continue from it.
    public var liveIsUnexplained: Bool { manifestData != nil && liveRecord == nil }

    /// The sequence the next record gets: above every record and above whatever the
    /// live manifest and its signature have shown devices, so it never goes back.
    public var nextSequence: Int64 { max(history.last?.sequence ?? 0, liveManifestSequence ?? 0) + 1 }

    /// Reads the history and the live manifest of `manifestKey`.
    public static func load(from storage: any Storage, manifestKey: String) async throws -> TargetState {
        let prefix = TargetLayout.historyPrefix(manifestKey: manifestKey)
        var history: [Release] = []
        var recordObjects: [Int64: ObjectMetadata] = [:]
        for key in try await storage.list(prefix: prefix) {
            let name = key.dropFirst(prefix.count)
            guard name.hasSuffix(".json"), !name.contains("/"), Int64(name.dropLast(5)) != nil else { continue }
            guard let data = try await storage.get(key, limit: TargetLayout.recordLimit) else { continue }
            let record = try Release.decode(data, source: "\(storage.location)/\(key)")
            history.append(record)
            recordObjects[record.sequence] = try ObjectMetadata(of: data, cacheControl: CachePolicy.immutable, contentType: "application/json")
        }
        history.sort { $0.sequence < $1.sequence }
        let info = try await storage.head(manifestKey)
        let data = info == nil ? nil : try await storage.get(manifestKey, limit: TargetLayout.recordLimit)
        let signature = data == nil ? nil : try await storage.get(SignedManifest.signatureKey(for: manifestKey), limit: SignedManifest.maximumSignatureSize)
        let unsigned = data.map(InlineSignature.strip)
        let liveRecord = unsigned.flatMap { bytes in history.last { TargetLayout.rendering(of: $0) == bytes } }
        let liveManifestRelease = unsigned.flatMap { try? Release.decode($0, source: manifestKey) }
        let signedSequence = signature.flatMap { try? MinisignSignature(fileContents: String(decoding: $0, as: UTF8.self)) }
            .flatMap { TrustedComment(parsing: $0.trustedComment)?.sequence }
        let sequences = [liveRecord?.sequence, liveManifestRelease?.sequence, signedSequence].compactMap { $0 }
        var state = TargetState(
            history: history, manifestInfo: info, manifestData: data, signatureData: signature, liveRecord: liveRecord,
            liveManifestSequence: sequences.max(), liveManifestRelease: liveManifestRelease)
        state.recordObjects = recordObjects
        return state
    }

    /// The records that went live, oldest first. A record never went live when its
    /// publish stopped before the manifest write: the next record then replaced an
    /// older one, skipping it (or a record newer than the live one, not yet replaced).
    /// This needs no record but the later one, so it survives pruning.
    public var wentLive: [Release] {
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

    /// The base URL the records' download URLs were built from.
    public var baseURL: String? {
        for record in ([live].compactMap { $0 } + history.reversed()) {
            for model in record.models.values {
                for file in model.files {
                    let suffix = "/" + URLParts.percentEncodedPath(file.key)
                    if file.url.hasSuffix(suffix) { return String(file.url.dropLast(suffix.count)) }
                }
            }
        }
        return nil
    }
}

/// One release in a target's history, for `modelcast history`.
public struct HistoryEntry: Codable, Sendable, Equatable {
    public enum State: String, Codable, Sendable {
        /// The live manifest is this record.
        case live
        /// It was live once.
        case wentLive = "went live"
        /// Its publish stopped before the manifest was written.
        case neverLive = "never live"
        /// Newer than the live manifest: a publish under way, or one that failed last.
        case pending
    }

    public let sequence: Int64
    public let publishedAt: String
    public let expiresAt: String?
    public let state: State
    /// Model name → version.
    public let versions: [String: String]
    /// Sequence of the release devices fall back to from this one.
    public let rollbackSequence: Int64?

    enum CodingKeys: String, CodingKey {
        case sequence, state, versions
        case publishedAt = "published_at", expiresAt = "expires_at", rollbackSequence = "rollback_sequence"
    }
}

extension TargetState {
    /// Every record with what became of it, newest first.
    public var entries: [HistoryEntry] {
        let went = Set(wentLive.map(\.sequence))
        let liveSequence = liveRecord?.sequence
        return history.reversed().map { record in
            let state: HistoryEntry.State
            if record.sequence == liveSequence { state = .live }
            else if went.contains(record.sequence) { state = .wentLive }
            else if let live, record.sequence > live.sequence { state = .pending }
            else { state = .neverLive }
            return HistoryEntry(
                sequence: record.sequence, publishedAt: record.publishedAt, expiresAt: record.expiresAt, state: state,
                versions: record.models.mapValues(\.version), rollbackSequence: record.rollback?.sequence)
        }
    }
}
