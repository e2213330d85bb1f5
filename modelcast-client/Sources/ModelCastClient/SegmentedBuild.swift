import Crypto
import Foundation
import ModelCastFormat
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Builds a new version of a file from the old one and single-range requests, as a
/// `DeltaPlan` says: segments the old file holds are copied, the others fetched, one
/// request per run of them, a few runs at once. Every segment is hashed before it is
/// written at its place, copies included; one that fails is fetched once more on its own.
/// The whole file must then hash to the index's SHA-256. The first run is asked for alone:
/// a server that ignores Range answers it with the whole file (a 200, as stored), which is
/// kept as the download. A server that does not answer a range exactly (a 416 or 501,
/// another Content-Range, an encoding, a 200 after a 206) ends the build early, so the
/// caller downloads the file whole instead (and only then).
///
/// The part file keeps its proven segments across a crash: a build that finds a part of
/// the artifact's size keeps every segment already in place that hashes right, and
/// copies or fetches only the rest.
struct SegmentedBuild: Sendable {
    let http: HTTPStream
    /// Range requests in flight at once.
    var parallelRequests = 4
    /// Failed segments a run may refetch before the build gives up on ranges.
    static let maxRepairs = 4

    /// What the build did.
    enum Outcome: Equatable {
        /// `fetchedBytes`: body bytes received (repairs included); `keptBytes`: bytes a
        /// crashed earlier build had already put in place and that still hashed right.
        case built(fetchedBytes: Int64, requests: Int, keptBytes: Int64)
        /// The server answered the first range with the whole file (a 200, as stored): it
        /// was kept as a plain download instead of asking for it again.
        case whole(fetchedBytes: Int64)
        /// The server cannot serve the plan's ranges, or a segment failed twice: download whole.
        case fallBack(reason: String)
    }

    /// Writes the file `index` describes to `part` from the old version's bytes (`old`,
    /// where the plan's copies read) and `url`.
    func build(plan: DeltaPlan, index: SegmentIndex, url: URL, old input: any SeedBytes, part: URL) async throws -> Outcome {
        let output = try PositionalFile(url: part)
        let layout = SegmentLayout(index: index)
        let kept = try layout.segmentsInPlace(output)
        try output.truncate(to: index.artifactSize)
        let runs = plan.steps.flatMap { step -> [Range<Int>] in
            guard case .fetch(_, _, let segments) = step else { return [] }
            return layout.missing(segments, kept: kept)
        }
        var fetched: Int64 = 0, requests = 0, whole = false
        do {
            // The first run alone, before any copy: a server that ignores Range answers it
            // with the whole file, which is then kept as the download (one request, not
            // four, and no seed copied for nothing).
            if let first = runs.first {
                let probe = try await fetchRun(first, layout: layout, url: url, into: output, acceptWhole: true)
                (fetched, requests, whole) = (probe.bytes, probe.requests, probe.whole)
            }
            if !whole {
                for case .copy(let source, let offset, let length) in plan.steps {
                    try layout.copy(from: input, source: source, to: output, offset: offset, length: length, skipping: kept)
                }
                try await boundedEach(Array(runs.dropFirst()), limit: parallelRequests) { run in
                    try await fetchRun(run, layout: layout, url: url, into: output, acceptWhole: false)
                } combine: { result in
                    fetched += result.bytes
                    requests += result.requests
                }
            }
        } catch let refusal as RangeRefused {
            return .fallBack(reason: refusal.reason)
        }
        let digest = try layout.digest(of: output)
        if whole {
            return digest == index.artifactSHA256 ? .whole(fetchedBytes: fetched) : .fallBack(reason: "the whole file sent for a range is not the indexed file")
        }
        guard digest == index.artifactSHA256 else {
            throw ClientError.io(path: part.path, reason: "the built file hashes to \(hex(digest)), not the index's \(hex(index.artifactSHA256))")
        }
        let keptBytes = kept.reduce(Int64(0)) { $0 + Int64(index.segments[$1].length) }
        return .built(fetchedBytes: fetched, requests: requests, keptBytes: keptBytes)
    }

    /// What fetching a run cost.
    struct RunResult: Sendable {
        var bytes: Int64
        var requests: Int
        /// The server sent the whole file instead (only where `acceptWhole`).
        var whole: Bool
    }

    /// Fetches one run of segments; a segment that arrives damaged is fetched again on
    /// its own (once). With `acceptWhole`, a 200 carrying the file as stored is written
    /// whole instead.
    private func fetchRun(_ run: Range<Int>, layout: SegmentLayout, url: URL, into output: PositionalFile, acceptWhole: Bool) async throws -> RunResult {
        var (received, failed, whole) = try await fetch(run, layout: layout, url: url, into: output, acceptWhole: acceptWhole)
        if whole { return RunResult(bytes: received, requests: 1, whole: true) }
        var requests = 1
        guard failed.count <= Self.maxRepairs else {
            throw RangeRefused(reason: "\(failed.count) segments of one response failed their SHA-256")
        }
        for segment in failed {
            let (bytes, again, _) = try await fetch(segment..<segment + 1, layout: layout, url: url, into: output, acceptWhole: false)
            received += bytes
            requests += 1
            guard again.isEmpty else { throw RangeRefused(reason: "segment \(segment) failed its SHA-256 twice") }
        }
        return RunResult(bytes: received, requests: requests, whole: false)
    }

    /// Fetches the bytes of `segments` in one request, writing each segment that hashes
    /// right at its place; returns the body bytes received and the segments that did not.
    private func fetch(_ segments: Range<Int>, layout: SegmentLayout, url: URL, into output: PositionalFile, acceptWhole: Bool) async throws -> (Int64, [Int], Bool) {
        let start = layout.offsets[segments.lowerBound]
        let end = layout.end(of: segments.upperBound - 1)
        var request = URLRequest(url: url)
        request.setValue("bytes=\(start)-\(end - 1)", forHTTPHeaderField: "Range")
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        let expected = "bytes \(start)-\(end - 1)/\(layout.index.artifactSize)"
        let receiver = SegmentReceiver(layout: layout, segments: segments, output: output)
        _ = try await http.get(request, metadata: false, onResponse: { response in
            let encoding = response.value(forHTTPHeaderField: "Content-Encoding") ?? "identity"
            if acceptWhole, response.statusCode == 200, encoding.lowercased() == "identity" {
                receiver.takeWholeFile()
                return
            }
            guard response.statusCode == 206 else {
                throw RangeRefused(reason: "HTTP \(response.statusCode) to a Range request for \(expected)")
            }
            let range = response.value(forHTTPHeaderField: "Content-Range") ?? ""
            guard range == expected else { throw RangeRefused(reason: "Content-Range '\(range)', expected '\(expected)'") }
            guard encoding.lowercased() == "identity" else { throw RangeRefused(reason: "Content-Encoding \(encoding) on a range") }
        }, onData: { chunk in
            try receiver.receive(chunk)
        })
        let (received, failed) = try receiver.finish()
        return (received, failed, receiver.whole)
    }
}

/// Runs `body` over `items`, at most `limit` at once, handing each result to `combine`
/// (one at a time); the first error cancels the rest and is thrown.
func boundedEach<Item: Sendable, Result: Sendable>(
    _ items: [Item], limit: Int, _ body: @escaping @Sendable (Item) async throws -> Result, combine: (Result) -> Void
) async throws {
    try await withThrowingTaskGroup(of: Result.self) { group in
        var next = 0
        while next < items.count && next < limit {
            let item = items[next]
            group.addTask { try await body(item) }
            next += 1
        }
        while let result = try await group.next() {
            combine(result)
            if next < items.count {
                let item = items[next]
                group.addTask { try await body(item) }
                next += 1
            }
        }
    }
}

/// The server did not answer a range exactly (or kept sending damaged segments): the
/// build stops and the file is fetched whole.
struct RangeRefused: Error {
    let reason: String
}

func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
