import Foundation
import XCTest
import ModelCastFormat
import ModelCastCore
import ModelCastTestSupport

/// Issue 27: a publish writes each large artifact's segment index beside it, names it in
/// the manifest entry, lists it in the hosting files, and verify (directory and served
/// URL) checks it like an artifact; prune keeps the indexes of kept releases only.
final class SegmentIndexCLITests: XCTestCase {
    func testPublishWritesVerifiesAndPrunesSegmentIndexes() throws {
        let work = try Scratch()
        let v1 = work.at("v1.gguf"), v2 = work.at("v2.gguf")
        for (path, flags) in [(v1, [String]()), (v2, ["--retrain-attention"])] {
            let made = try runProcess("/usr/bin/env", ["python3", repositoryRoot + "/bench/delta_models.py", "gguf", path,
                                                       "--layers", "2", "--width", "512", "--vocab", "6000"] + flags)
            XCTAssertEqual(made.status, 0, made.stderr)
        }
        let port = try freeLoopbackPort()
        let base = "http://127.0.0.1:\(port)/ml"
        let site = work.at("site")
        try PublishRun([v1], version: "1.0.0", baseURL: base, to: site, environment: pinnedEnvironment()).succeeds()
        // --json carries the same estimate, per file.
        let planned = try modelcast(["publish", v2, "--name", "m", "--version", "2.0.0", "--base-url", base, "--to", site, "--dry-run", "--json"],
                                    environment: pinnedEnvironment())
        XCTAssertEqual(planned.status, 0, planned.stderr)
        let reuse = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(planned.stdout.utf8)) as? [String: Any])?["reuse"] as? [[String: Any]])
        XCTAssertEqual(reuse.count, 1)
        XCTAssertEqual(reuse.first?["from"] as? String, "1.0.0")
        XCTAssertEqual(reuse.first?["fetched_bytes"] as? Int, 8 * 512 * 512 * 2)
        XCTAssertEqual(reuse.first?["range_requests"] as? Int, 2)
        XCTAssertEqual(reuse.first?["whole_download"] as? Bool, false)
        try validateAgainstSchema([planned.stdout], "publish-report.schema.json")
        let second = try PublishRun([v2], version: "2.0.0", baseURL: base, to: site, environment: pinnedEnvironment()).succeeds()
        // The publish says what a device on the live version will fetch.
        XCTAssertTrue(second.stderr.contains("m 2.0.0 v2.gguf: a device on 1.0.0 fetches \(8 * 512 * 512 * 2) of "), second.stderr)
        XCTAssertTrue(second.stderr.contains(", 2 range requests); "), second.stderr)
        let release = try Release.decode(Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json")), source: "manifest")
        // The manifest, segments included, is valid against the published schema; a
        // segments object missing its sha256 is not.
        let script = """
            import json, sys, jsonschema
            validator = jsonschema.Draft202012Validator(json.load(open(sys.argv[1])))
            doc = json.load(open(sys.argv[2]))
            validator.validate(doc)
            del doc["models"]["m"]["files"][0]["segments"]["sha256"]
            assert not validator.is_valid(doc)
            print("ok")
            """
        let schema = try runProcess("/usr/bin/env", ["python3", "-c", script, repositoryRoot + "/schema/modelcast-manifest.schema.json", site + "/manifest.json"])
        XCTAssertEqual(schema.stdout, "ok\n", schema.stderr)
        let file = try XCTUnwrap(release.models["m"]?.files.first)
        let segments = try XCTUnwrap(file.segments, "a 20 MB GGUF gets an index")
        XCTAssertEqual(segments.url, base + "/" + segments.key)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: site + "/" + segments.key)))
        XCTAssertEqual(Int64(bytes.count), segments.size)
        XCTAssertEqual(try SHA256Hasher.digest(bytes).hex, segments.sha256)
        let index = try SegmentIndex(decoding: bytes)
        XCTAssertEqual(index.artifactSize, file.size)
        XCTAssertEqual(index.artifactSHA256, SHA256Digest(hex: file.sha256)?.bytes)
        // What a device holding 1.0.0 would fetch: the retrained attention tensors only.
        let previous = try XCTUnwrap(release.rollback?.models["m"]?.files.first?.segments)
        let old = try SegmentIndex(decoding: [UInt8](Data(contentsOf: URL(fileURLWithPath: site + "/" + previous.key))))
        XCTAssertEqual(DeltaPlan(new: index, have: DeltaPlan.offsets(of: old)).fetchedBytes, 8 * 512 * 512 * 2)
        // Listed in the hosting files, served with the artifact's headers.
        let objects = try String(contentsOfFile: site + "/_modelcast/objects.json", encoding: .utf8)
        XCTAssertTrue(objects.contains(segments.key), objects)
        let verified = try modelcast(["verify", site, "--allow-http"])
        XCTAssertEqual(verified.status, 0, verified.stdout + verified.stderr)
        XCTAssertTrue(verified.stdout.contains("its index tiles it in \(index.segments.count) segments; 8 fetched by range as devices do hash as indexed"), verified.stdout)
        let everySegment = try modelcast(["verify", site, "--allow-http", "--segments", "all"])
        XCTAssertEqual(everySegment.status, 0, everySegment.stdout + everySegment.stderr)
        XCTAssertTrue(everySegment.stdout.contains("segments tile it and hash as indexed; cutting it again gives the same index"), everySegment.stdout)
        let server = try BackgroundProcess(modelcastBinary, ["serve", site, "--port", String(port)])
        XCTAssertEqual(server.firstLine, base)
        let (served, report) = try verifyJSON([base + "/manifest.json", "--allow-http"])
        XCTAssertEqual(served.status, 0, served.stdout + served.stderr)
        let indexChecks = try XCTUnwrap(report).checks.filter { $0.subject.hasSuffix(".mcsx") }
        XCTAssertEqual(Set(indexChecks.filter { $0.check == "artifact.sha256" }.map(\.status)), [.pass])
        XCTAssertEqual(indexChecks.filter { $0.check == "artifact.sha256" }.count, 2, "the live release's index and its rollback target's")
        // Through the URL: each artifact's index proven, eight of its segments fetched by range.
        let segmentChecks = try XCTUnwrap(report).checks.filter { $0.check == "artifact.segments" }
        XCTAssertEqual(segmentChecks.map(\.status), [.pass, .pass], "\(segmentChecks)")
        XCTAssertTrue(segmentChecks.allSatisfy { $0.detail.contains("8 fetched by range as devices do hash as indexed") }, "\(segmentChecks)")
        let (all, allReport) = try verifyJSON([base + "/manifest.json", "--allow-http", "--segments", "all"])
        XCTAssertEqual(all.status, 0, all.stdout + all.stderr)
        let allChecks = try XCTUnwrap(allReport).checks.filter { $0.check == "artifact.segments" }
        XCTAssertTrue(allChecks.allSatisfy { $0.detail.contains("segments tile it and hash as indexed; 4 fetched by range as devices do") }, "\(allChecks)")
        // --segment-index never: no index, the manifest entry has none.
        let plain = work.at("plain")
        try PublishRun([v1], version: "1.0.0", baseURL: base, to: plain, ["--segment-index", "never"], environment: pinnedEnvironment()).succeeds()
        XCTAssertFalse(try String(contentsOfFile: plain + "/manifest.json", encoding: .utf8).contains("segments"))
        // Two more releases, then prune to the live one (with its rollback target and that
        // record's own rollback target, 2.0.0): 1.0.0's index goes with its artifact.
        for version in [3, 4] {
            let path = work.at("v\(version).gguf")
            XCTAssertEqual(try runProcess("/usr/bin/env", ["python3", repositoryRoot + "/bench/delta_models.py", "gguf", path,
                                                           "--layers", "2", "--width", "512", "--vocab", "6000", "--seed", String(version)]).status, 0)
            try PublishRun([path], version: "\(version).0.0", baseURL: base, to: site, environment: pinnedEnvironment()).succeeds()
        }
        let v1Index = try XCTUnwrap(release.rollback?.models["m"]?.files.first?.segments?.key)
        XCTAssertTrue(FileManager.default.fileExists(atPath: site + "/" + v1Index))
        let pruned = try modelcast(["prune", site, "--keep", "1"])
        XCTAssertEqual(pruned.status, 0, pruned.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: site + "/models/m/1.0.0/v1.gguf"), pruned.stdout)
        XCTAssertFalse(FileManager.default.fileExists(atPath: site + "/" + v1Index), pruned.stdout)
        XCTAssertTrue(FileManager.default.fileExists(atPath: site + "/" + segments.key))
        let after = try modelcast(["verify", site, "--allow-http"])
        XCTAssertEqual(after.status, 0, after.stdout + after.stderr)
    }

    /// verify proves an index against its artifact: by default the index tiles the
    /// artifact and sampled segments hash as indexed (a flipped first segment, an index a
    /// byte short fail); with `--segments all` a segment anywhere that does not hash as
    /// indexed fails everywhere, and segments that hash right but are cut otherwise than
    /// the scheme cuts fail where verify can cut the artifact again (a directory); a server
    /// that ignores Range fails the sampled range fetches.
    func testVerifyProvesTheIndexAgainstTheArtifact() throws {
        let work = try Scratch()
        let model = work.at("m.gguf")
        let made = try runProcess("/usr/bin/env", ["python3", repositoryRoot + "/bench/delta_models.py", "gguf", model,
                                                   "--layers", "2", "--width", "512", "--vocab", "6000"])
        XCTAssertEqual(made.status, 0, made.stderr)
        let port = try freeLoopbackPort()
        for mode in ["ok", "norange"] {
            try PublishRun([model], version: "1.0.0", baseURL: "http://127.0.0.1:\(port)/\(mode)", to: try work.atMadeParent("sites/\(mode)"),
                           ["--segment-index", "always"], environment: pinnedEnvironment()).succeeds()
        }
        let server = try BackgroundProcess("/usr/bin/env", ["python3", repositoryRoot + "/Tests/Fixtures/misbehaving_server.py", work.at("sites"), String(port)])
        XCTAssertEqual(server.firstLine, "ready")
        let (ranged, rangedReport) = try verifyJSON(["http://127.0.0.1:\(port)/norange/manifest.json", "--allow-http"])
        XCTAssertNotEqual(ranged.status, 0)
        let refused = try XCTUnwrap(rangedReport).checks.filter { $0.check == "artifact.segments" }
        XCTAssertEqual(refused.map(\.status), [.fail])
        XCTAssertTrue(refused.first?.detail.contains("HTTP 200 to 'Range: bytes=0-") ?? false, "\(refused)")

        // Rewrites the index (and the manifest's entry for it) with `edit` applied.
        let site = work.at("sites/ok")
        let release = try Release.decode(Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json")), source: "manifest")
        let reference = try XCTUnwrap(release.models["m"]?.files.first?.segments)
        let original = try SegmentIndex(decoding: [UInt8](Data(contentsOf: URL(fileURLWithPath: site + "/" + reference.key))))
        let artifact = try [UInt8](Data(contentsOf: URL(fileURLWithPath: model)))
        func install(_ segments: [SegmentIndex.Segment]) throws {
            try install(bytes: try SegmentIndex(scheme: original.scheme, artifactSize: original.artifactSize, artifactSHA256: original.artifactSHA256, segments: segments).encoded())
        }
        func install(bytes: [UInt8]) throws {
            try Data(bytes).write(to: URL(fileURLWithPath: site + "/" + reference.key))
            var manifest = try String(contentsOfFile: site + "/manifest.json", encoding: .utf8)
            let current = try XCTUnwrap(try Release.decode(Data(manifest.utf8), source: "manifest").models["m"]?.files.first?.segments)
            manifest = manifest.replacingOccurrences(of: current.sha256, with: try SHA256Hasher.digest(bytes).hex)
                .replacingOccurrences(of: "\"size\" : \(current.size)", with: "\"size\" : \(bytes.count)")
                .replacingOccurrences(of: "\"size\": \(current.size)", with: "\"size\": \(bytes.count)")
            try manifest.write(toFile: site + "/manifest.json", atomically: true, encoding: .utf8)
        }
        // One segment's hash flipped: --segments all hashes every segment and finds it.
        var flipped = original.segments
        flipped[3] = SegmentIndex.Segment(length: flipped[3].length, sha256: flipped[3].sha256.map { $0 ^ 1 })
        try install(flipped)
        for target in [site, "http://127.0.0.1:\(port)/ok/manifest.json"] {
            let result = try modelcast(["verify", target, "--allow-http", "--segments", "all"])
            XCTAssertNotEqual(result.status, 0, target)
            XCTAssertTrue(result.stdout.contains("segment 3 (\(flipped[3].length) bytes at \(original.offsets[3])) does not hash to the index's value"), result.stdout)
        }
        // By default the sample finds a flipped hash where it fetches (the first segment always).
        var first = original.segments
        first[0] = SegmentIndex.Segment(length: first[0].length, sha256: first[0].sha256.map { $0 ^ 1 })
        try install(first)
        for target in [site, "http://127.0.0.1:\(port)/ok/manifest.json"] {
            let result = try modelcast(["verify", target, "--allow-http"])
            XCTAssertNotEqual(result.status, 0, target)
            XCTAssertTrue(result.stdout.contains("segment 0: the \(first[0].length) bytes served do not hash to the index's value"), result.stdout)
        }
        // An index whose segments do not tile the artifact (the last one a byte short) fails
        // by default: the index is proven whole before any segment is sampled.
        var short = try original.encoded()
        let last = short.count - 36
        let length = UInt32(short[last]) | UInt32(short[last + 1]) << 8 | UInt32(short[last + 2]) << 16 | UInt32(short[last + 3]) << 24
        XCTAssertEqual(length, original.segments.last?.length, "the last segment's record is the last 36 bytes")
        withUnsafeBytes(of: (length - 1).littleEndian) { short.replaceSubrange(last..<(last + 4), with: $0) }
        try install(bytes: short)
        for target in [site, "http://127.0.0.1:\(port)/ok/manifest.json"] {
            let result = try modelcast(["verify", target, "--allow-http"])
            XCTAssertNotEqual(result.status, 0, target)
            XCTAssertTrue(result.stdout.contains("the segments cover \(original.artifactSize - 1) bytes, but the artifact has \(original.artifactSize)"), result.stdout)
        }
        // The first two segments merged: they tile and hash right, but the scheme cuts otherwise.
        let merged = [SegmentIndex.Segment(length: original.segments[0].length + original.segments[1].length,
                                           sha256: try SHA256Hasher.digest(Array(artifact[0..<Int(original.segments[0].length + original.segments[1].length)])).bytes)]
            + original.segments.dropFirst(2)
        try install(merged)
        let directory = try modelcast(["verify", site, "--allow-http", "--segments", "all"])
        XCTAssertNotEqual(directory.status, 0)
        XCTAssertTrue(directory.stdout.contains("cutting the artifact again gives \(original.segments.count) segments, not the index's \(merged.count)"), directory.stdout)
        let served = try modelcast(["verify", "http://127.0.0.1:\(port)/ok/manifest.json", "--allow-http", "--segments", "all"])
        XCTAssertEqual(served.status, 0, "through a URL the cuts cannot be re-derived; the segments tile and hash right: " + served.stdout)
        let sampled = try modelcast(["verify", site, "--allow-http"])
        XCTAssertEqual(sampled.status, 0, "by default the cuts are not re-derived; the index tiles and the sample hashes right: " + sampled.stdout)
    }
}
