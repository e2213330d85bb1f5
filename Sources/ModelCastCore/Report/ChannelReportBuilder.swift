import Foundation

extension ChannelReport {
    /// What the page shows of one channel, from its state as read (no I/O).
    /// `otherChannels` (channel → records) name promotions in the history.
    static func make(name: String, manifestKey: String, state: TargetState, otherChannels: [String: [Release]], now: Date) -> ChannelReport {
        var notes: [String] = []
        if let problem = state.index.problem, !state.history.isEmpty {
            notes.append("history index: \(problem) (every record was read instead)")
        }
        if state.manifestData == nil {
            notes.append("no live manifest at \(manifestKey)")
        } else if state.liveIsUnexplained, let manifest = state.manifestData {
            do {
                _ = try Release.decode(InlineSignature.strip(manifest), source: manifestKey)
                notes.append("the live manifest matches no history record (written by other means?): shown as it reads")
            } catch {
                notes.append("the live manifest matches no history record and cannot be read as a modelcast release: \(error)")
            }
        }
        // What devices get: the record the live manifest renders, else the manifest read as a
        // release (never the newest record standing in for a manifest that reads as none).
        let live = state.liveRecord ?? state.liveManifestRelease
        let history = state.entries(otherChannels: otherChannels)
        let liveAction = live.flatMap { live in history.first { $0.sequence == live.sequence }?.action }
        return ChannelReport(
            name: name, manifestKey: manifestKey, live: live.map(LiveRelease.init),
            rollout: live.flatMap { RolloutCurve.report(state, live: $0, liveAction: liveAction, now: now) },
            signature: SignatureReport(state, release: live, now: now), history: timeline(history), verify: nil, notes: notes)
    }

    /// The entries with the versions each changed against the record before it.
    private static func timeline(_ entries: [HistoryEntry]) -> [TimelineEntry] {
        entries.enumerated().map { index, entry in
            let before = index + 1 < entries.count ? entries[index + 1].versions : [:]
            var changes: [String] = []
            for label in Set(before.keys).union(entry.versions.keys).sorted() {
                switch (before[label], entry.versions[label]) {
                case let (old?, new?) where old != new: changes.append("\(label) \(old) → \(new)")
                case (nil, let new?): changes.append("\(label) \(new) added")
                case (let old?, nil): changes.append("\(label) \(old) removed")
                default: break
                }
            }
            return TimelineEntry(
                sequence: entry.sequence, publishedAt: entry.publishedAt, state: entry.state, action: entry.action, detail: entry.detail,
                versions: entry.versions, changes: changes, rolloutPercent: entry.rollout?.percent)
        }
    }
}

extension LiveRelease {
    init(_ release: Release) {
        var models: [ModelReport] = []
        for name in release.models.keys.sorted() {
            let model = release.models[name]!
            if let variants = model.variants, !variants.isEmpty {
                for variant in variants {
                    var report = ModelReport(name: name, variant: variant.name, requires: Self.requirements(variant.requires), model: variant.model)
                    // Model-level: every variant is gated by its model's.
                    report.licence = model.licence
                    report.downloadConditions = model.downloadConditions
                    models.append(report)
                }
            } else {
                models.append(ModelReport(name: name, variant: nil, requires: nil, model: model))
            }
        }
        self.init(
            sequence: release.sequence, publishedAt: release.publishedAt, expiresAt: release.expiresAt, profile: release.profile,
            minAppVersion: release.minAppVersion, models: models, totalSize: models.reduce(0) { $0 + $1.size })
    }

    /// `min_memory=6.0 GiB, platforms={ "ios": "17" }`: each requirement as its key and value.
    private static func requirements(_ requires: [String: JSONValue]) -> String? {
        requires.isEmpty ? nil : requires.keys.sorted().map { key in
            let value = requires[key]!
            if key == "min_memory", case .int(let bytes) = value { return "\(key)=\(formatBytes(Int64(bytes)))" }
            return "\(key)=\(value.pageText)"
        }.joined(separator: ", ")
    }
}

extension ModelReport {
    /// How many `meta` fields, and how many characters of each, the page shows.
    static let metaLimit = (fields: 12, characters: 200)

    init(name: String, variant: String?, requires: String?, model: ReleaseModel) {
        var meta: [String: String] = [:]
        for key in model.meta.keys.sorted().prefix(Self.metaLimit.fields) {
            let value = model.meta[key]!
            var text = value.pageText
            if text.count > Self.metaLimit.characters { text = String(text.prefix(Self.metaLimit.characters)) + "…" }
            meta[key] = text
        }
        let files = model.files.map { FileReport(name: $0.placement, key: $0.key, size: $0.size, sha256: $0.sha256) }
        self.init(name: name, variant: variant, requires: requires, version: model.version, size: files.reduce(0) { $0 + $1.size },
                  modelSigned: model.modelSignature != nil, meta: meta, files: files,
                  licence: model.licence, downloadConditions: model.downloadConditions, storage: model.storage)
    }
}

extension SignatureReport {
    init(_ state: TargetState, release: Release?, now: Date) {
        let signature = state.liveSignature
        let comment = signature.flatMap { TrustedComment(parsing: $0.trustedComment) }
        let expiresAt = release?.expiresAt ?? comment?.expiresAt
        let daysLeft = expiresAt.flatMap(parseTimestamp).map { ($0.timeIntervalSince(now) / 86_400 * 10).rounded(.down) / 10 }
        self.init(
            state: signature != nil ? .signed : state.liveIsSigned ? .unreadable : .unsigned, keyID: signature?.keyID.hex,
            signedSequence: comment?.sequence, expiresAt: expiresAt, daysLeft: daysLeft, checked: nil)
    }
}

extension JSONValue {
    /// A string as it is; any other value as JSON on one line (`{ "ios": "17" }`).
    var pageText: String {
        if case .string(let text) = self { return text }
        return serialized(nestedAt: 0).split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
    }
}
