import Foundation
import XCTest
@testable import ModelCastClient
import ModelCastFormat
import ModelCastCore
import ModelCastTestSupport

/// Issue 27, the updater end to end: an update from each older kept version builds the
/// newest from the bytes the device has; a zipped Core ML package updates from its
/// unpacked files; a device killed in the middle of a segmented build keeps what it
/// proved and fetches only the rest when it runs again.
final class DeltaUpdateTests: XCTestCase {
    func gguf(_ path: String, _ flags: [String]) throws {
        try FileManager.default.createDirectory(atPath: PathText.parent(path), withIntermediateDirectories: true)
        let made = try runProcess("/usr/bin/env", ["python3", repositoryRoot + "/bench/delta_models.py", "gguf", path,
                                                   "--layers", "4", "--width", "512", "--vocab", "6000"] + flags)
        XCTAssertEqual(made.status, 0, made.stderr)
    }

    /// 1.0.0, 2.0.0 (1.0.0 with every attention projection retrained) and 3.0.0 (1.0.0 with
    /// a new chat template), written by llama.cpp's writer into `site`'s work folder.
    func threeVersions(_ site: ClientTests.Site) throws -> (String, String, String) {
        let v1 = site.work.at("v1/m.gguf"), v2 = site.work.at("v2/m.gguf"), v3 = site.work.at("v3/m.gguf")
        try gguf(v1, [])
        try gguf(v2, ["--retrain-attention"])
        try gguf(v3, ["--template", "{% for m in messages %}{{ m.content }}{% endfor %}"])
        return (v1, v2, v3)
    }

    /// Devices on 1.0.0 and on 2.0.0 (the versions kept on the host) each update to 3.0.0
    /// from what they run: 1.0.0 differs from 3.0.0 only in its chat template, 2.0.0 in its
    /// attention tensors too; a new device downloads 3.0.0 whole.
    func testAnUpdateFromEachOlderKeptVersion() async throws {
        let site = try ClientTests.Site()
        let (v1, v2, v3) = try threeVersions(site)
        var devices: [String: ModelUpdater] = [:]
        for (version, path) in [("1.0.0", v1), ("2.0.0", v2)] {
            try site.publish([path], version: version, ["--segment-index", "always"])
            try site.start()
            let device = try ModelUpdater(site.configuration(device: "d-\(version)", directory: "device-\(version)"))
            _ = try await device.update()
            XCTAssertEqual(device.installed("m")?.version, version)
            devices[version] = device
        }
        // A new chat template is a compatible interface change (issue 50): no flags needed.
        try site.publish([v3], version: "3.0.0", ["--segment-index", "always"])
        let size = Int64(try Data(contentsOf: URL(fileURLWithPath: v3)).count)
        var fetched: [String: Int64] = [:]
        for (version, device) in devices {
            let outcome = try await device.update()
            XCTAssertEqual(outcome, .updated(sequence: 3, models: ["m": "3.0.0"]))
            XCTAssertEqual(try Data(contentsOf: try XCTUnwrap(device.installed("m")).mainFile), try Data(contentsOf: URL(fileURLWithPath: v3)))
            let downloads = await device.lastDownloads
            let download = try XCTUnwrap(downloads.first)
            XCTAssertEqual(download.seededFrom, version)
            XCTAssertNotNil(download.rangeRequests)
            fetched[version] = download.fetchedBytes
        }
        XCTAssertLessThan(try XCTUnwrap(fetched["1.0.0"]), 256 << 10, "a new template costs a device on 1.0.0 its metadata only")
        XCTAssertGreaterThan(try XCTUnwrap(fetched["2.0.0"]), 4 * 512 * 512 * 2 * 4 - 1, "a device on 2.0.0 fetches 3.0.0's attention tensors")
        XCTAssertLessThan(try XCTUnwrap(fetched["2.0.0"]), size / 2)
        let fresh = try ModelUpdater(site.configuration(device: "d-new", directory: "device-new"))
        _ = try await fresh.update()
        let whole = await fresh.lastDownloads
        XCTAssertEqual(whole, [FileDownload(model: "m", file: "m.gguf", size: size, fetchedBytes: size, seededFrom: nil, rangeRequests: nil)])
    }

    /// Issue 49, part 4: a device on 1.0.0 updates to 2.0.0 (attention retrained) and keeps
    /// 1.0.0 for a rollback; 3.0.0 is 1.0.0's weights with a new chat template. Seeded from
    /// 2.0.0 alone it fetched the attention tensors again (8,404,416 bytes here); seeded from
    /// every kept version it fetches only what neither holds, the metadata.
    func testAnUpdateBringingBackAnOlderKeptVersionsTensorsFetchesOnlyWhatNoneHolds() async throws {
        let site = try ClientTests.Site()
        let (v1, v2, v3) = try threeVersions(site)
        try site.publish([v1], version: "1.0.0", ["--segment-index", "always"])
        try site.start()
        let device = try ModelUpdater(site.configuration(device: "d", directory: "device"))
        _ = try await device.update()
        try site.publish([v2], version: "2.0.0", ["--segment-index", "always"])
        _ = try await device.update()
        XCTAssertEqual(device.installed("m")?.version, "2.0.0")
        try site.publish([v3], version: "3.0.0", ["--segment-index", "always"])
        let outcome = try await device.update()
        XCTAssertEqual(outcome, .updated(sequence: 3, models: ["m": "3.0.0"]))
        XCTAssertEqual(try Data(contentsOf: try XCTUnwrap(device.installed("m")).mainFile), try Data(contentsOf: URL(fileURLWithPath: v3)))
        let downloads = await device.lastDownloads
        let download = try XCTUnwrap(downloads.first)
        // What neither kept version holds, by the indexes: the bytes of 3.0.0's segments
        // that are in neither 1.0.0's nor 2.0.0's index.
        func segments(_ path: String) throws -> [SegmentIndex.Segment] {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            let hasher = SegmentHasher(regions: SegmentPlan.regions(path: path, size: Int64(bytes.count)))
            try bytes.withUnsafeBytes { try hasher.update($0) }
            return try hasher.finish()
        }
        let held = Set(try segments(v1).map(\.sha256)).union(try segments(v2).map(\.sha256))
        let novel = try segments(v3).filter { !held.contains($0.sha256) }.reduce(Int64(0)) { $0 + Int64($1.length) }
        XCTAssertLessThanOrEqual(download.fetchedBytes, novel + novel / 50 + (256 << 10), "fetched \(download.fetchedBytes) bytes; \(novel) are in no kept version")
        XCTAssertEqual(download.seededFrom, "2.0.0, 1.0.0", "the segments came from both kept versions")
        XCTAssertNotNil(download.rangeRequests)
    }

    /// Through nginx and the snippet publish wrote (gzip on for all it may compress): a
    /// retrain is built from ranges; a re-quantization (every tensor changed, the plan
    /// past 70 % of the file) is downloaded whole in one request, never both.
    func testThroughNginxARetrainUsesRangesAndARequantizationDownloadsWhole() async throws {
        guard let binary = NginxServer.binary else { throw XCTSkip("nginx is not installed (scripts/setup installs it)") }
        let site = try ClientTests.Site()
        let paths = [site.work.at("v1/m.gguf"), site.work.at("v2/m.gguf"), site.work.at("v3/m.gguf")]
        try gguf(paths[0], [])
        try gguf(paths[1], ["--retrain-attention"])
        try gguf(paths[2], ["--retrain-attention", "--quantize", "Q8_0"])
        try site.publish([paths[0]], version: "1.0.0", ["--segment-index", "always"])
        let nginx = try NginxServer(binary: binary, site: site.root, port: site.port, work: site.work, probe: site.base + "/manifest.json")
        defer { withExtendedLifetime(nginx) {} }
        let device = try ModelUpdater(site.configuration())
        _ = try await device.update()
        try site.publish([paths[1]], version: "2.0.0", ["--segment-index", "always"])
        _ = try await device.update()
        let retrain = await device.lastDownloads
        XCTAssertEqual(retrain.first?.rangeRequests, 4, "one range per layer's attention tensors: \(retrain)")
        XCTAssertEqual(retrain.first?.fetchedBytes, 4 * 4 * 512 * 512 * 2, "the attention tensors' bytes exactly")
        XCTAssertEqual(retrain.first?.seededFrom, "1.0.0")
        try site.publish([paths[2]], version: "3.0.0", ["--segment-index", "always"])
        _ = try await device.update()
        let requantized = await device.lastDownloads
        let size = Int64(try Data(contentsOf: URL(fileURLWithPath: paths[2])).count)
        XCTAssertEqual(requantized, [FileDownload(model: "m", file: "m.gguf", size: size, fetchedBytes: size, seededFrom: nil, rangeRequests: nil)])
        XCTAssertEqual(try Data(contentsOf: try XCTUnwrap(device.installed("m")).mainFile), try Data(contentsOf: URL(fileURLWithPath: paths[2])))
    }

    /// The file's name changes between versions (`m-1.0.gguf` → `m-1.1.gguf`): the
    /// installed file seeds the new one all the same, so the server sends the retrained
    /// attention tensors only (counted from its log of the ranges it served), not the file.
    func testARenamedFileIsBuiltFromTheInstalledOne() async throws {
        let site = try ClientTests.Site()
        let v1 = site.work.at("v1/m-1.0.gguf"), v2 = site.work.at("v2/m-1.1.gguf")
        try gguf(v1, [])
        try gguf(v2, ["--retrain-attention"])
        try site.publish([v1], version: "1.0.0", ["--segment-index", "always"])
        try site.start()
        let device = try ModelUpdater(site.configuration())
        _ = try await device.update()
        try site.publish([v2], version: "1.1.0", ["--segment-index", "always"])
        let outcome = try await device.update()
        XCTAssertEqual(outcome, .updated(sequence: 2, models: ["m": "1.1.0"]))
        let installed = try XCTUnwrap(device.installed("m"))
        XCTAssertEqual(installed.mainFile.lastPathComponent, "m-1.1.gguf")
        XCTAssertEqual(try Data(contentsOf: installed.mainFile), try Data(contentsOf: URL(fileURLWithPath: v2)))
        let attention: Int64 = 4 * 4 * 512 * 512 * 2
        let downloads = await device.lastDownloads
        XCTAssertEqual(downloads.first?.seededFrom, "1.0.0", "\(downloads)")
        XCTAssertEqual(downloads.first?.fetchedBytes, attention, "\(downloads)")
        // The server's side: every request for the new file named a range; they add up to the tensors.
        let requests = site.requests.filter { $0.contains("/m-1.1.gguf ") }
        XCTAssertFalse(requests.isEmpty)
        var served: Int64 = 0
        for request in requests {
            guard let range = request.range(of: #"\(bytes=(\d+)-(\d+)\)"#, options: .regularExpression) else {
                return XCTFail("a request for the whole file: \(request)")
            }
            let bounds = request[range].dropFirst("(bytes=".count).dropLast().split(separator: "-").compactMap { Int64($0) }
            served += bounds[1] - bounds[0] + 1
        }
        XCTAssertEqual(served, attention, "\(requests)")
        let size = Int64(try Data(contentsOf: URL(fileURLWithPath: v2)).count)
        XCTAssertLessThan(served * 100 / size, 40, "a fraction of the \(size) bytes")
    }

    /// A Core ML package (written by coremltools) is published as a stored zip and
    /// installed unpacked: the zip is gone, but its stored entries' bytes are the unpacked
    /// files', so the next version's zip is built from them. A retrained classifier head
    /// costs the device the head's weight blob and a few headers.
    func testAZippedPackageUpdatesFromItsUnpackedFiles() async throws {
        let site = try ClientTests.Site()
        var packages: [String] = []
        for (version, flags) in [("1", [String]()), ("2", ["--retrain-head"])] {
            let package = site.work.at("v\(version)/Classifier.mlpackage")
            try FileManager.default.createDirectory(atPath: PathText.parent(package), withIntermediateDirectories: true)
            let made = try runProcess("/usr/bin/env", ["python3", repositoryRoot + "/bench/delta_coreml.py", package] + flags)
            XCTAssertEqual(made.status, 0, made.stderr)
            packages.append(package)
        }
        try site.publish([packages[0]], version: "1.0.0", ["--segment-index", "always"])
        try site.start()
        let device = try ModelUpdater(site.configuration())
        _ = try await device.update()
        try site.publish([packages[1]], version: "2.0.0", ["--segment-index", "always"])
        let outcome = try await device.update()
        XCTAssertEqual(outcome, .updated(sequence: 2, models: ["m": "2.0.0"]))
        let installed = try XCTUnwrap(device.installed("m"))
        let weights = "Data/com.apple.CoreML/weights/weight.bin"
        XCTAssertEqual(try Data(contentsOf: installed.mainFile.appendingPathComponent(weights)),
                       try Data(contentsOf: URL(fileURLWithPath: packages[1] + "/" + weights)))
        let downloads = await device.lastDownloads
        let download = try XCTUnwrap(downloads.first)
        XCTAssertEqual(download.seededFrom, "1.0.0")
        // The head: 1000 × 768 FP16 weights and 1000 biases (1,538,000 bytes); the rest is
        // headers, the model description and the central directory.
        XCTAssertGreaterThanOrEqual(download.fetchedBytes, 1_538_000)
        XCTAssertLessThan(download.fetchedBytes, 1_538_000 + (64 << 10), "\(download)")
    }

    /// `kill -9` of the example device while its segmented build waits on a range: the
    /// next run keeps every segment the first one proved (copies and finished ranges) and
    /// asks only for what the stalled range had not delivered.
    func testAKilledSegmentedBuildResumes() throws {
        let work = try Scratch("modelcast-delta-kill")
        let device = modelcastBinary.replacingOccurrences(of: "/modelcast", with: "/modelcast-device")
        let port = try freeLoopbackPort()
        let server = try BackgroundProcess("/usr/bin/env", ["python3", repositoryRoot + "/Tests/Fixtures/misbehaving_server.py", work.at("sites"), String(port)])
        XCTAssertEqual(server.firstLine, "ready")
        let base = "http://127.0.0.1:\(port)/stallonce"
        try gguf(work.at("v1/m.gguf"), [])
        try gguf(work.at("v2/m.gguf"), ["--retrain-attention"])
        for (version, path) in [("1.0.0", work.at("v1/m.gguf")), ("2.0.0", work.at("v2/m.gguf"))] {
            let published = try modelcast(["publish", path, "--name", "m", "--version", version, "--base-url", base,
                                           "--to", try work.atMadeParent("sites/stallonce"), "--segment-index", "always"])
            XCTAssertEqual(published.status, 0, published.stderr)
            if version == "1.0.0" {
                let first = try runProcess(device, ["--manifest", base + "/manifest.json", "--dir", work.at("phone")])
                XCTAssertEqual(first.status, 0, first.stderr)
            }
        }
        let sha2 = try sha256(work.at("v2/m.gguf"))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: device)
        process.arguments = ["--manifest", base + "/manifest.json", "--dir", work.at("phone")]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Four runs of retrained tensors: the first alone, then the other three at once (one stalls).
        let deadline = Date().addingTimeInterval(30)
        func ranges() -> [String] { server.standardError.split(separator: "\n").map(String.init).filter { $0.contains("/2.0.0/m.gguf") && $0.contains("Range: bytes=") } }
        while ranges().count < 4, Date() < deadline { usleep(50_000) }
        usleep(500_000)
        XCTAssertTrue(process.isRunning, "the stalled range keeps the device waiting")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let part = work.at("phone/downloads/\(sha2).delta")
        XCTAssertTrue(FileManager.default.fileExists(atPath: part), "the killed build leaves its part")
        let before = ranges().count
        let second = try runProcess(device, ["--manifest", base + "/manifest.json", "--dir", work.at("phone")])
        XCTAssertEqual(second.status, 0, second.stderr)
        XCTAssertEqual(try sha256(work.at("phone/models/m/current/m.gguf")), sha2)
        XCTAssertFalse(FileManager.default.fileExists(atPath: part))
        let resumed = Array(ranges().dropFirst(before))
        XCTAssertEqual(resumed.count, 1, "only the stalled range's missing segments are asked for again: \(resumed)")
        XCTAssertTrue(second.stdout.contains("in 1 range request; the rest copied from 1.0.0"), second.stdout)
    }

    func sha256(_ path: String) throws -> String {
        let result = try runProcess("/usr/bin/sha256sum", [path])
        return String(result.stdout.prefix(64))
    }
}
