import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// A directory target's hosting files at catalog size (issue 17), through the binary:
/// `_headers` stays within Cloudflare Pages' 100 rules, and publish warns (stderr and
/// `--json`) when a host's documented limit is crossed, and only then.
final class HostingLimitsCLITests: XCTestCase {
    let base = "https://cdn.example.com/models"

    func publishJSON(_ arguments: [String], cwd: String) throws -> (ProcessOutput, PublishReport) {
        let result = try modelcast(["publish"] + arguments + ["--json", "--progress", "none"], cwd: cwd)
        XCTAssertEqual(result.status, 0, result.stderr)
        return (result, try JSONDecoder().decode(PublishReport.self, from: Data(result.stdout.utf8)))
    }

    /// A small file each kind of model a catalog holds: its format's magic where it has one.
    func modelFile(_ index: Int, in work: Scratch) throws -> String {
        let name = String(format: "m%03d", index)
        switch index % 4 {
        // ir_version 7, a graph with one input 'x', a doc_string of 64 bytes.
        case 0: return try work.write("\(name).onnx", [0x08, 0x07, 0x3A, 0x05, 0x5A, 0x03, 0x0A, 0x01, 0x78, 0x32, 64] + patternBytes(64, seed: UInt32(index)))
        case 1: return try work.write("\(name).tflite", [0, 0, 0, 0] + Array("TFL3".utf8) + patternBytes(64, seed: UInt32(index)))
        case 2: return try work.write("\(name).gguf", Array(try Data(contentsOf: URL(fileURLWithPath: repositoryRoot + "/examples/models/tiny-llm.gguf"))))
        default: return try work.write("\(name).bin", patternBytes(64, seed: UInt32(index)))
        }
    }

    func testHundredModelCatalogKeepsHeadersWithinPagesLimitAndWarnsNothing() throws {
        let work = try Scratch()
        var models: [String] = []
        for index in 0..<99 { models.append(String(format: "m%03d=", index) + (try modelFile(index, in: work))) }
        models.append("classifier=" + repositoryRoot + "/examples/models/TinyClassifier.mlpackage")
        let (result, report) = try publishJSON(models + ["--version", "1.0.0", "--base-url", base, "--to", work.at("site"), "--hosted-on", "pages"], cwd: work.path)
        XCTAssertEqual(report.objects.filter { $0.role == "artifact" }.count, 100)
        XCTAssertEqual(report.warnings, [])
        XCTAssertFalse(result.stderr.contains("warning:"), result.stderr)
        let headers = try String(contentsOfFile: work.at("site/_headers"), encoding: .utf8)
        // Manifest, models/*, manifests/*, one pattern per extension (onnx, tflite, gguf,
        // bin), and the one zip's own rule (a pattern for one object saves nothing).
        XCTAssertEqual(HostLimits.headerRuleCount(headers), 8, headers)
        XCTAssertTrue(headers.contains("\n/models/models/*.tflite\n  Content-Type: application/octet-stream\n"), headers)
        XCTAssertTrue(headers.contains("\n/models/models/classifier/1.0.0/TinyClassifier.mlpackage.zip\n  Content-Type: application/zip\n"), headers)
        // objects.json still lists every object, one entry each: serve and verify read it.
        let objects = try String(contentsOfFile: work.at("site/_modelcast/objects.json"), encoding: .utf8)
        XCTAssertEqual(objects.components(separatedBy: "\"key\":").count - 1, 102)
        // Verifying the directory takes every object's headers from objects.json, not _headers.
        try FileManager.default.removeItem(atPath: work.at("site/_headers"))
        let verify = try modelcast(["verify", work.at("site"), "--progress", "none"])
        XCTAssertEqual(verify.status, 0, verify.stdout + verify.stderr)
        XCTAssertTrue(verify.stdout.contains("PASS  artifact.content-type"), verify.stdout)
    }

    /// Issue 25, item 15: host limits are checked only for a host the user deploys to
    /// (`--hosted-on`), once, about what this publish adds (never the history again).
    func testAnArtifactOverPagesFileLimitWarnsOnlyWhenDeployingThere() throws {
        let work = try Scratch()
        // Sparse: 25 MiB and one byte, written as a hole.
        let big = work.at("big.bin")
        XCTAssertTrue(FileManager.default.createFile(atPath: big, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: big))
        try handle.truncate(atOffset: (25 << 20) + 1)
        try handle.close()
        let small = try work.write("small.bin", patternBytes(100, seed: 1))
        func config(_ smallVersion: String) throws -> String {
            try work.write("modelcast-\(smallVersion).yml", text: """
                base_url: \(base)
                models:
                  big:
                    version: 1.0.0
                    files: [\(big)]
                  small:
                    version: \(smallVersion)
                    files: [\(small)]
                """)
        }
        // Not deploying to Pages: nothing about Pages.
        let (quiet, quietReport) = try publishJSON([big, "--version", "1.0.0", "--base-url", base, "--to", work.at("plain")], cwd: work.path)
        XCTAssertEqual(quietReport.warnings, [])
        XCTAssertFalse(quiet.stderr.contains("Cloudflare"), quiet.stderr)

        let site = work.at("site")
        let (result, report) = try publishJSON(["--config", try config("1.0.0"), "--to", site, "--hosted-on", "pages"], cwd: work.path)
        XCTAssertEqual(report.warnings.count, 1, "\(report.warnings)")
        let warning = try XCTUnwrap(report.warnings.first)
        for part in ["models/big/1.0.0/big.bin", "25 MiB", "Cloudflare Pages"] { XCTAssertTrue(warning.contains(part), warning) }
        XCTAssertEqual(result.stderr.components(separatedBy: "warning: " + warning).count - 1, 1, "once: \(result.stderr)")
        // The next publish adds only the small model: the big one, already there, is not listed again.
        try work.write("small.bin", patternBytes(120, seed: 2))
        let (next, nextReport) = try publishJSON(["--config", try config("1.1.0"), "--to", site, "--hosted-on", "pages"], cwd: work.path)
        XCTAssertEqual(nextReport.warnings, [], next.stderr)
        // wrangler's 300 MiB is not Pages' 25 MiB: deploying with wrangler only, nothing to say.
        let (_, wranglerReport) = try publishJSON([big, "--version", "1.0.0", "--base-url", base, "--to", work.at("r2"), "--hosted-on", "wrangler"], cwd: work.path)
        XCTAssertEqual(wranglerReport.warnings, [])
    }
}
