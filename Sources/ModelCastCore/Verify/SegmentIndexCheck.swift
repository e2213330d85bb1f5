import Foundation
import ModelCastFormat
import NIOConcurrencyHelpers

/// Hashes a streamed artifact segment by segment as its index cuts it, in the read that
/// hashes the whole: proves the index's segments tile the bytes served and hash as it
/// says (`artifact.segments`). Given the artifact's regions (where verify can read them
/// from a local file), it also cuts the bytes again by the scheme, in the same read; the
/// cuts' lengths are compared, the index's hashes of those same segments being proven.
final class SegmentProof: BodyWatcher {
    // @unchecked: SHA256Hasher and SegmentHasher are mutable classes; State is private and
    // only ever reached through `state`'s lock.
    private struct State: @unchecked Sendable {
        var segment = 0
        var filled = 0
        var hasher: SHA256Hasher?
        /// The first segment whose bytes differ, or bytes past the last segment.
        var problem: String?
        /// The scheme's own cutting of the same bytes, when the regions are known.
        var recut: SegmentHasher?
    }
    let index: SegmentIndex
    private let regions: [SegmentRegion]?
    private let state: NIOLockedValueBox<State>

    init(index: SegmentIndex, regions: [SegmentRegion]?) {
        self.index = index
        self.regions = regions
        state = NIOLockedValueBox(Self.fresh(regions))
    }

    /// Nothing read yet; the re-cut only cuts (the segments' hashes are proven above).
    private static func fresh(_ regions: [SegmentRegion]?) -> State {
        State(recut: regions.map { SegmentHasher(regions: $0, hashing: false) })
    }

    @Sendable func append(_ chunk: UnsafeRawBufferPointer) throws {
        try state.withLockedValue { state in
            try state.recut?.update(chunk)
            var rest = chunk
            while !rest.isEmpty, state.problem == nil {
                guard state.segment < index.segments.count else {
                    state.problem = "the artifact has bytes past the index's last segment"
                    return
                }
                let length = Int(index.segments[state.segment].length)
                let take = min(length - state.filled, rest.count)
                if state.hasher == nil { state.hasher = try SHA256Hasher() }
                state.hasher!.update(UnsafeRawBufferPointer(rebasing: rest[0..<take]))
                state.filled += take
                rest = UnsafeRawBufferPointer(rebasing: rest[take...])
                if state.filled == length {
                    if state.hasher!.finalize().bytes != index.segments[state.segment].sha256 {
                        state.problem = "segment \(state.segment) (\(length) bytes at \(index.offsets[state.segment])) does not hash to the index's value"
                    }
                    state.hasher = nil
                    state.filled = 0
                    state.segment += 1
                }
            }
        }
    }

    @Sendable func reset() { state.withLockedValue { $0 = Self.fresh(regions) } }

    /// The lengths of the segments the scheme cuts the bytes into, when the regions were given.
    func recutLengths() throws -> [UInt32]? {
        try state.withLockedValue { try $0.recut?.finishCuts() }
    }

    /// Nil when every segment arrived whole and hashed right; otherwise what did not.
    func problem() -> String? {
        state.withLockedValue { state in
            if let problem = state.problem { return problem }
            guard state.segment == index.segments.count, state.filled == 0 else {
                return "the artifact ended inside segment \(state.segment) of \(index.segments.count)"
            }
            return nil
        }
    }
}

/// The proven index of an artifact checked by sample (`SegmentCheck.sample`): nothing
/// watches the artifact's bytes (they are hashed once, whole); the sampled segments are
/// fetched by range once it has been read.
final class SampledSegments: BodyWatcher {
    let index: SegmentIndex

    init(index: SegmentIndex) {
        self.index = index
    }

    @Sendable func append(_ chunk: UnsafeRawBufferPointer) throws {}

    @Sendable func reset() {}
}

/// `artifact.segments`: an artifact's segment index is proven (the bytes the manifest pins,
/// tiling the artifact, naming its size and digest), and a sample of its segments fetched
/// by range as devices fetch them must hash as indexed (`SegmentCheck.sample`). With
/// `SegmentCheck.all` every segment is also hashed in the read that hashes the artifact,
/// and a directory's file is cut again by the scheme.
struct SegmentsCheck: ArtifactCheck {
    /// Segments fetched by range besides the first, the last and two between: this many
    /// more at random (a different few each run).
    static let randomSamples = 4

    var ids: [VerifyCheckID] { [.artifactSegments] }

    /// The segments are hashed as the bytes stream by; a store proves an artifact by its
    /// checksum without reading them, so it has no segments to cut.
    func statement(for source: FetchedFrom) -> SourceStatement {
        switch source {
        case .server, .files: return .runs
        case .storeAPI: return .skipped("not checked through the store's API, which proves the artifact by its checksum without reading it (verify URL cuts it by its segment index and fetches segments by range, as devices do)")
        }
    }

    func concerns(_ read: ArtifactRead) -> Bool { read.object.segmentIndex != nil }

    /// The artifact's segment index, fetched and proven against the manifest, watching the
    /// download; nil (and a failed `artifact.segments`) when it cannot be. Read from a local
    /// file, the regions to cut it again come from its structure first.
    func prepare(_ object: ExpectedObject, with verification: ArtifactVerification, deadline: Date, log: CheckLog) async -> (any BodyWatcher)? {
        guard let reference = object.segmentIndex else { return nil }
        let collector = ByteCollector()
        let label = object.label
        let index: SegmentIndex
        do {
            let response = try await verification.verifier.fetchWithRetries(reference.url, range: nil, limit: reference.size + 1, deadline: deadline, rules: verification.rules,
                                                                             reset: { collector.reset() }, consume: collector.append)
            let bytes = collector.data
            guard response.status == 200, Int64(bytes.count) == reference.size,
                  try SHA256Hasher.digest(bytes).hex == reference.sha256 else {
                log.add(.fail, .artifactSegments, object.url, "\(label): its segment index (\(reference.url)) is not the one the manifest names (HTTP \(response.status), \(bytes.count) bytes)")
                return nil
            }
            index = try SegmentIndex(decoding: [UInt8](bytes))
            guard index.artifactSize == object.size, SHA256Digest(bytes: index.artifactSHA256)?.hex == object.sha256 else {
                log.add(.fail, .artifactSegments, object.url, "\(label): its segment index describes another artifact (\(index.artifactSize) bytes)")
                return nil
            }
        } catch {
            log.add(.fail, .artifactSegments, object.url, "\(label): its segment index (\(reference.url)): \(error)")
            return nil
        }
        guard verification.options.segments == .all else { return SampledSegments(index: index) }
        let fetcher = verification.fetcher
        let regions = fetcher.reads == .files ? SegmentPlan.regions(path: fetcher.origin(of: object.url), size: index.artifactSize) : nil
        return SegmentProof(index: index, regions: regions)
    }

    /// After the artifact was read whole and right: its segments as the index cuts them
    /// (streamed), the cuts re-derived from a local file, and sampled segments fetched by
    /// range from a server. An index that could not be read, or an artifact whose size or
    /// digest failed, is reported by those checks.
    func run(_ read: ArtifactRead, with verification: ArtifactVerification, log: CheckLog) async {
        let (object, url, label) = (read.object, read.url, read.label)
        guard case .streamed(let digest, _) = read.content, digest.hex == object.sha256, read.response.bytesRead == object.size else { return }
        if let sampled = read.watchers[.artifactSegments] as? SampledSegments {
            let index = sampled.index
            let picks = Self.samples(of: index.segments.count)
            if let problem = await sampleRanges(object, index: index, picks: picks, with: verification) {
                log.add(.fail, .artifactSegments, url, "\(label): \(problem)")
                return
            }
            log.add(.pass, .artifactSegments, url, "\(label): its index tiles it in \(index.segments.count) segments; \(picks.count) fetched by range as devices do hash as indexed (--segments all hashes every one)")
            return
        }
        guard let proof = read.watchers[.artifactSegments] as? SegmentProof else { return }
        if let problem = proof.problem() {
            log.add(.fail, .artifactSegments, url, "\(label): \(problem)")
            return
        }
        let count = proof.index.segments.count
        if read.source == .files {
            do {
                // Cut again in the read that hashed it (the regions came from the file);
                // the same cuts are the same segments, whose hashes were just proven.
                let again = try proof.recutLengths() ?? []
                guard again == proof.index.segments.map(\.length) else {
                    log.add(.fail, .artifactSegments, url, "\(label): cutting the artifact again gives \(again.count) segments, not the index's \(count): devices would reuse less than the publish report said")
                    return
                }
            } catch {
                log.add(.fail, .artifactSegments, url, "\(label): \(error)")
                return
            }
            log.add(.pass, .artifactSegments, url, "\(label): \(count) segments tile it and hash as indexed; cutting it again gives the same index")
            return
        }
        let picks = Self.samples(of: count, random: 0)
        if let problem = await sampleRanges(object, index: proof.index, picks: picks, with: verification) {
            log.add(.fail, .artifactSegments, url, "\(label): \(problem)")
            return
        }
        log.add(.pass, .artifactSegments, url, "\(label): \(count) segments tile it and hash as indexed; \(picks.count) fetched by range as devices do (206, exact Content-Range, no encoding)")
    }

    /// The segments to fetch by range, in order: the first, the last, two between, and
    /// `random` others drawn at random (fewer when there are not so many).
    static func samples(of count: Int, random: Int = randomSamples) -> [Int] {
        var picks = Set([0, count / 3, (2 * count) / 3, count - 1].filter { $0 >= 0 && $0 < count })
        let wanted = min(count, picks.count + random)
        while picks.count < wanted { picks.insert(Int.random(in: 0..<count)) }
        return picks.sorted()
    }

    /// Fetches each segment of `picks` with a single-range request; nil when each came
    /// back as a device needs (206, the exact Content-Range, no encoding, the indexed
    /// SHA-256), otherwise what did not.
    private func sampleRanges(_ object: ExpectedObject, index: SegmentIndex, picks: [Int], with verification: ArtifactVerification) async -> String? {
        for segment in picks {
            let start = index.offsets[segment], length = Int64(index.segments[segment].length)
            let range = start...(start + length - 1)
            // Hashed as it arrives: a segment can be megabytes, and jobs sample at once.
            let body = HashingSink(progress: nil)
            let expected = "bytes \(range.lowerBound)-\(range.upperBound)/\(index.artifactSize)"
            do {
                let response = try await verification.verifier.fetchWithRetries(
                    object.url, range: range, limit: length + 1, deadline: min(verification.deadline, Date().addingTimeInterval(verification.options.requestTimeout)),
                    rules: verification.rules, reset: { body.reset() }, consume: body.append)
                guard response.status == 206 else { return "segment \(segment): HTTP \(response.status) to 'Range: bytes=\(range.lowerBound)-\(range.upperBound)', expected 206: devices would download the whole file" }
                guard response.headers["content-range"] == expected else {
                    return "segment \(segment): Content-Range '\(response.headers["content-range"] ?? "")', expected '\(expected)'"
                }
                if let encoding = response.headers["content-encoding"], encoding.lowercased() != "identity" {
                    return "segment \(segment): Content-Encoding \(encoding) on a range"
                }
                guard response.bytesRead == length, try body.finish().bytes == index.segments[segment].sha256 else {
                    return "segment \(segment): the \(response.bytesRead) bytes served do not hash to the index's value"
                }
            } catch {
                return "segment \(segment): \(error)"
            }
        }
        return nil
    }
}
