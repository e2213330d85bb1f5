import Foundation

/// Whether a target's live manifest is as new as its history says it must be.
///
/// Sequences only go up, so once a sequence went live, an older live manifest means
/// an older copy is being served: a restored backup, a half-finished rollback, a
/// stale CDN. A record proves that the release it `replaces` went live (its publish
/// found it live), and so does the release a record rolls back to; a record newer
/// than the live one proves nothing by itself (its publish may have died before the
/// manifest write, or be under way).
struct LiveFreshness: Sendable, Equatable {
    /// The live manifest's sequence: the record it renders, else its own or its signature's.
    let liveSequence: Int64?
    /// The newest sequence known to have gone live, and the record that says so.
    let newestWentLive: (sequence: Int64, provenBy: Int64)?

    static func == (a: LiveFreshness, b: LiveFreshness) -> Bool {
        a.liveSequence == b.liveSequence && a.newestWentLive?.sequence == b.newestWentLive?.sequence
            && a.newestWentLive?.provenBy == b.newestWentLive?.provenBy
    }

    init(_ state: TargetState) {
        liveSequence = state.manifestData == nil ? nil : (state.liveRecord?.sequence ?? state.liveManifestSequence)
        var newest: (sequence: Int64, provenBy: Int64)?
        for record in state.history {
            // Records written before `replaces` existed name their predecessor as the rollback.
            for sequence in [record.replaces, record.rollback?.sequence].compactMap({ $0 }) where sequence > (newest?.sequence ?? 0) {
                newest = (sequence, record.sequence)
            }
        }
        newestWentLive = newest
    }

    /// True when the live manifest is older than a release that already went live.
    var isStale: Bool {
        guard let live = liveSequence, let newest = newestWentLive else { return false }
        return live < newest.sequence
    }

    /// Logs `manifest.freshness`: a failure naming both sequences when the live manifest
    /// is older than a release that went live; nothing when there is nothing to compare.
    func check(source: String, log: CheckLog) {
        guard let live = liveSequence else { return }
        guard let newest = newestWentLive else {
            log.add(.pass, .manifestFreshness, source, "sequence \(live); no history record says a newer one went live")
            return
        }
        if live < newest.sequence {
            log.add(.fail, .manifestFreshness, source, "the live manifest is sequence \(live), older than sequence \(newest.sequence), which went live (history record \(newest.provenBy) replaced it): an older manifest is being served (a stale copy or cache, a restored backup, a half-finished rollback); devices that saw \(newest.sequence) ignore it")
        } else {
            log.add(.pass, .manifestFreshness, source, "sequence \(live), not older than \(newest.sequence), the newest that history says went live")
        }
    }
}

/// The live manifest of the target a CDN serves from (`verify URL --origin TARGET`).
struct OriginManifest: Sendable {
    /// `s3://bucket/prefix/manifest.json` or `DIR/manifest.json`.
    let location: String
    /// Its bytes, or nil when the origin has no manifest there.
    let data: Data?
    /// Its sequence (the record it renders, else its own or its signature's).
    let sequence: Int64?
    /// The target's history, to name the sequence of a served manifest that carries none.
    let history: [Release]

    static func load(from storage: any Storage, manifestKey: String) async throws -> OriginManifest {
        let state = try await TargetState.load(from: storage, manifestKey: manifestKey)
        return OriginManifest(
            location: "\(storage.location)/\(manifestKey)", data: state.manifestData,
            sequence: state.manifestData == nil ? nil : (state.liveRecord?.sequence ?? state.liveManifestSequence),
            history: state.history)
    }

    /// Compares the manifest a URL serves with this one (bytes), naming the sequence of each.
    func compare(served: Data, servedSequence: Int64?, source: String, log: CheckLog) {
        let unsigned = InlineSignature.strip(served)
        // A manifest without a sequence of its own (another profile, unsigned): the record it renders.
        let servedSequence = servedSequence ?? history.last { TargetLayout.rendering(of: $0) == unsigned }?.sequence
        func name(_ sequence: Int64?) -> String { sequence.map { "sequence \($0)" } ?? "a manifest with no sequence" }
        guard let data else {
            log.add(.fail, .manifestOrigin, source, "the origin \(location) has no manifest; the URL serves \(name(servedSequence))")
            return
        }
        if data == served {
            log.add(.pass, .manifestOrigin, source, "the same bytes as the origin \(location) (\(name(sequence)))")
            return
        }
        var detail = "the CDN serves \(name(servedSequence)), the origin \(location) has \(sequence.map(String.init) ?? "no sequence")"
        if let servedSequence, let sequence {
            if servedSequence < sequence {
                detail += ": the CDN serves an older manifest (a stale cache: purge it, or shorten the manifest's Cache-Control)"
            } else if servedSequence > sequence {
                detail += ": the origin is older than what the CDN serves (the origin went back, or another origin is behind the CDN)"
            } else {
                detail += " too, but the bytes differ (sha256 \(sha256Hex(served)) served, \(sha256Hex(data)) at the origin): something rewrites the manifest"
            }
        }
        log.add(.fail, .manifestOrigin, source, detail)
    }

    private func sha256Hex(_ data: Data) -> String {
        // try?: only for the message ("?" when it cannot be hashed).
        ((try? SHA256Hasher.digest(data))?.hex).map { String($0.prefix(16)) + "…" } ?? "?"
    }
}
