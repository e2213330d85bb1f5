import Foundation
import XCTest
@testable import ModelCastClient
import ModelCastFormat
import ModelCastCore
import ModelCastTestSupport

/// Issue 27: a device builds a new GGUF from the one it has and single-range requests,
/// against `modelcast serve`'s neighbour, the misbehaving server: honest ranges build it
/// with one request per changed run; a server that encodes or answers a wrong
/// Content-Range makes it fall back after one response head, and one that ignores
/// Range has its whole-file answer kept; a corrupt segment is fetched once more, then the
/// build falls back.
final class SegmentedBuildTests: XCTestCase {
    func model(_ work: Scratch, _ name: String, _ flags: [String]) throws -> (path: String, index: SegmentIndex) {
        let path = work.at(name)
        let made = try runProcess("/usr/bin/env", ["python3", repositoryRoot + "/bench/delta_models.py", "gguf", path] + flags)
        XCTAssertEqual(made.status, 0, made.stderr)
        let size = Int64(try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int))
        return (path, try StreamDigester.segmentIndex(ofFileAt: path, regions: SegmentPlan.regions(path: path, size: size)))
    }

    func testBuildsFromRangesAndFallsBackWhenTheServerCannotServeThem() async throws {
        let work = try Scratch()
        let old = try model(work, "old.gguf", [])
        let new = try model(work, "new.gguf", ["--retrain-attention"])
        let root = work.at("site")
        for mode in ["ok", "norange", "wholewrong", "gzip", "wrongtotal", "corruptonce", "corruptranges"] {
            try FileManager.default.createDirectory(atPath: root + "/" + mode, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: new.path, toPath: root + "/\(mode)/new.gguf")
        }
        let port = try freeLoopbackPort()
        let server = try BackgroundProcess("/usr/bin/env", ["python3", repositoryRoot + "/Tests/Fixtures/misbehaving_server.py", root, String(port)])
        XCTAssertEqual(server.firstLine, "ready")
        let plan = DeltaPlan(new: new.index, have: DeltaPlan.offsets(of: old.index))
        let http = HTTPStream(timeout: 10, bounds: TransferBounds(minimumRate: 1024, window: 30, metadataDeadline: 60))
        defer { http.invalidate() }
        func build(_ mode: String) async throws -> (SegmentedBuild.Outcome, String) {
            let part = work.at("\(mode).part")
            let outcome = try await SegmentedBuild(http: http).build(
                plan: plan, index: new.index, url: URL(string: "http://127.0.0.1:\(port)/\(mode)/new.gguf")!,
                old: try PositionalFile(readingFrom: URL(fileURLWithPath: old.path)), part: URL(fileURLWithPath: part))
            return (outcome, part)
        }
        let (honest, built) = try await build("ok")
        XCTAssertEqual(honest, .built(fetchedBytes: plan.fetchedBytes, requests: plan.requests, keptBytes: 0))
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: built)), try Data(contentsOf: URL(fileURLWithPath: new.path)))
        // A server that ignores Range: the first range's answer (200, the whole file) is
        // kept as the download; nothing else is asked for.
        let (ignored, ignoredPath) = try await build("norange")
        XCTAssertEqual(ignored, .whole(fetchedBytes: new.index.artifactSize))
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: ignoredPath)), try Data(contentsOf: URL(fileURLWithPath: new.path)))
        XCTAssertEqual(server.standardError.split(separator: "\n").filter { $0.hasPrefix("GET /norange/") }.count, 1)
        // A whole file sent for a range that is not the indexed file: never kept.
        let (wrongWhole, _) = try await build("wholewrong")
        XCTAssertEqual(wrongWhole, .fallBack(reason: "the whole file sent for a range is not the indexed file"))
        for mode in ["gzip", "wrongtotal"] {
            let (outcome, _) = try await build(mode)
            guard case .fallBack(let reason) = outcome else { XCTFail("\(mode): \(outcome)"); continue }
            XCTAssertFalse(reason.isEmpty)
        }
        // One corrupt answer: the failed segment alone is asked for once more (one request,
        // that segment's bytes), and the file is built whole.
        let (repaired, repairedPath) = try await build("corruptonce")
        guard case .built(let fetched, let requests, _) = repaired else { return XCTFail("\(repaired)") }
        XCTAssertEqual(requests, plan.requests + 1)
        let fetchedSegments = plan.steps.flatMap { step -> [Int64] in
            guard case .fetch(_, _, let segments) = step else { return [] }
            return segments.map { Int64(new.index.segments[$0].length) }
        }
        XCTAssertTrue(fetchedSegments.contains(fetched - plan.fetchedBytes), "repairing cost \(fetched - plan.fetchedBytes) bytes, not one segment's")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: repairedPath)), try Data(contentsOf: URL(fileURLWithPath: new.path)))
        // Every range corrupt: a segment fails twice and the build falls back.
        let (corrupt, _) = try await build("corruptranges")
        guard case .fallBack(let reason) = corrupt else { return XCTFail("\(corrupt)") }
        XCTAssertTrue(reason.hasSuffix("failed its SHA-256 twice"), reason)
        let log = server.standardError.split(separator: "\n").filter { $0.hasPrefix("GET /corruptranges/") }
        XCTAssertLessThanOrEqual(log.count, plan.requests * 2, "\(log)")
    }

    /// A build that finds a part file left by a crashed one keeps every segment in place
    /// that hashes right (and only those): it copies and fetches just the rest.
    func testABuildKeepsTheProvenSegmentsACrashedOneLeft() async throws {
        let work = try Scratch()
        let old = try model(work, "old.gguf", [])
        let new = try model(work, "new.gguf", ["--retrain-attention"])
        try FileManager.default.createDirectory(atPath: work.at("site/ok"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: new.path, toPath: work.at("site/ok/new.gguf"))
        let port = try freeLoopbackPort()
        let server = try BackgroundProcess("/usr/bin/env", ["python3", repositoryRoot + "/Tests/Fixtures/misbehaving_server.py", work.at("site"), String(port)])
        XCTAssertEqual(server.firstLine, "ready")
        let plan = DeltaPlan(new: new.index, have: DeltaPlan.offsets(of: old.index))
        guard case .fetch(let offset, let length, let segments)? = plan.steps.first(where: { if case .fetch = $0 { return true } else { return false } }) else {
            return XCTFail("the plan fetches nothing")
        }
        // The crash left the first fetched run in place, then one damaged segment of it
        // (a torn write) and zeros past the first half of the file.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: new.path))
        let half = bytes.count / 2
        bytes.replaceSubrange(half..<bytes.count, with: Data(count: bytes.count - half))
        let torn = Int(offset) + Int(new.index.segments[segments.lowerBound].length) / 2
        bytes[torn] ^= 0xFF
        let part = URL(fileURLWithPath: work.at("crashed.part"))
        try bytes.write(to: part)
        let http = HTTPStream(timeout: 10, bounds: TransferBounds(minimumRate: 1024, window: 30, metadataDeadline: 60))
        defer { http.invalidate() }
        let outcome = try await SegmentedBuild(http: http).build(
            plan: plan, index: new.index, url: URL(string: "http://127.0.0.1:\(port)/ok/new.gguf")!,
            old: try PositionalFile(readingFrom: URL(fileURLWithPath: old.path)), part: part)
        XCTAssertEqual(try Data(contentsOf: part), try Data(contentsOf: URL(fileURLWithPath: new.path)))
        guard case .built(let fetched, _, let kept) = outcome else { return XCTFail("\(outcome)") }
        let offsets = new.index.offsets
        let keptSegments = new.index.segments.indices.filter { offsets[$0] + Int64(new.index.segments[$0].length) <= Int64(half) && $0 != segments.lowerBound }
        XCTAssertEqual(kept, keptSegments.reduce(Int64(0)) { $0 + Int64(new.index.segments[$1].length) })
        let planned = Set(plan.steps.flatMap { step -> [Int] in
            guard case .fetch(_, _, let run) = step else { return [] }
            return Array(run)
        })
        let fetchedKept = keptSegments.filter { planned.contains($0) }
        XCTAssertEqual(fetched, plan.fetchedBytes - fetchedKept.reduce(Int64(0)) { $0 + Int64(new.index.segments[$1].length) })
        XCTAssertLessThan(fetched, plan.fetchedBytes, "the torn run's good segments were not fetched again (run of \(length) bytes)")
    }

    /// The updater end to end, against `modelcast serve`: the first install fetches the
    /// GGUF whole and keeps its index; the update to retrained attention fetches only the
    /// retrained tensors (one range request per changed run), and the installed file is
    /// the new version's bytes.
    func testAnUpdateDownloadsOnlyTheChangedSegments() async throws {
        let site = try ClientTests.Site()
        let v1 = site.work.at("v1/m.gguf"), v2 = site.work.at("v2/m.gguf")
        for (path, flags) in [(v1, [String]()), (v2, ["--retrain-attention"])] {
            try FileManager.default.createDirectory(atPath: PathText.parent(path), withIntermediateDirectories: true)
            let made = try runProcess("/usr/bin/env", ["python3", repositoryRoot + "/bench/delta_models.py", "gguf", path,
                                                       "--layers", "2", "--width", "512", "--vocab", "6000"] + flags)
            XCTAssertEqual(made.status, 0, made.stderr)
        }
        try site.publish([v1], version: "1.0.0")
        try site.start()
        let updater = try ModelUpdater(site.configuration())
        let installed1 = try await updater.update()
        XCTAssertEqual(installed1, .updated(sequence: 1, models: ["m": "1.0.0"]))
        let first = site.requests.filter { $0.contains("/1.0.0/m.gguf") }
        XCTAssertEqual(first.count, 1, "a first install downloads the file whole: \(first)")

        try site.publish([v2], version: "2.0.0")
        let updated = try await updater.update()
        XCTAssertEqual(updated, .updated(sequence: 2, models: ["m": "2.0.0"]))
        let installed = try XCTUnwrap(updater.installed("m"))
        XCTAssertEqual(try Data(contentsOf: installed.mainFile), try Data(contentsOf: URL(fileURLWithPath: v2)))
        let ranges = site.requests.filter { $0.contains("/2.0.0/m.gguf") }
        XCTAssertEqual(ranges.count, 2, "one request per run of retrained tensors (2 layers), no full download: \(ranges)")
    }
}

