import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// docs/install.md's Python example runs as written against a real S3 API (moto) and the
/// debug binary: it publishes to `s3://models/prod` with `verify_url`, so the staged release
/// is verified through the public URL before it goes live, then verifies the live release
/// with the public key. Only the hosts change: the CDN is moto's own URL of the bucket
/// (plain http, hence `allow_http=True` on the final verify).
final class InstallPagePythonExampleTests: XCTestCase {
    /// The page's only ```python block.
    func example() throws -> String {
        let page = try String(contentsOfFile: repositoryRoot + "/docs/install.md", encoding: .utf8)
        let blocks = page.components(separatedBy: "```python\n").dropFirst().map { $0.components(separatedBy: "\n```").first ?? "" }
        XCTAssertEqual(blocks.count, 1, "docs/install.md has one Python example")
        return try XCTUnwrap(blocks.first)
    }

    /// `text` with `old` replaced by `new`, failing unless it occurs `times` times (the page
    /// changed: the substitution needs a look).
    func replacing(_ text: String, _ old: String, _ new: String, times: Int = 1) -> String {
        XCTAssertEqual(text.components(separatedBy: old).count - 1, times, "\(old) in the example")
        return text.replacingOccurrences(of: old, with: new)
    }

    func testThePythonExamplePublishesVerifiesThroughTheURLAndVerifies() throws {
        let moto = try MotoS3(bucket: "models", checkSignatures: false)  // anonymous GETs: the public URL
        try moto.allowPublicReads()
        let work = try Scratch("modelcast-install-example")
        // The package as the wheel lays it out, its binary the one under test.
        let package = work.at("python/modelcast")
        try FileManager.default.createDirectory(atPath: package + "/bin", withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: repositoryRoot + "/python/modelcast") where name.hasSuffix(".py") || name == "py.typed" {
            try FileManager.default.copyItem(atPath: repositoryRoot + "/python/modelcast/" + name, toPath: package + "/" + name)
        }
        try FileManager.default.createSymbolicLink(atPath: package + "/bin/modelcast", withDestinationPath: modelcastBinary)
        for name in ["tiny-llm.gguf", "tiny-llm-mmproj.gguf"] {
            _ = try work.write("run/out/" + name, Array(try Data(contentsOf: URL(fileURLWithPath: repositoryRoot + "/examples/models/" + name))))
        }
        let keys = try modelcast(["keygen", "--unencrypted", "--public-key", work.at("k.pub"), "--secret-key", work.at("k.key")])
        XCTAssertEqual(keys.status, 0, keys.stderr)

        let cdn = "\(moto.endpoint)/\(moto.bucket)/prod"
        var script = try example()
        script = replacing(script, "\"https://cdn.example.com/models\"", "\"\(cdn)\"", times: 2)
        script = replacing(script, "modelcast.verify(release.manifest_url, ", "modelcast.verify(release.manifest_url, allow_http=True, ")
        var environment = moto.environment
        environment["PYTHONPATH"] = work.at("python")
        environment["MODELCAST_SIGNING_KEY"] = try String(contentsOfFile: work.at("k.key"), encoding: .utf8)
        environment["MODEL_PUBLIC_KEY"] = try String(contentsOfFile: work.at("k.pub"), encoding: .utf8).split(separator: "\n").last.map(String.init)
        let run = try runProcess("/usr/bin/env", ["python3", "-c", script], cwd: work.at("run"), environment: environment)
        XCTAssertEqual(run.status, 0, run.stdout + run.stderr)
        XCTAssertTrue(run.stdout.contains("sequence 1 live at \(cdn)/manifest.json"), run.stdout)
        XCTAssertTrue(run.stdout.contains("checks passed"), run.stdout)
        XCTAssertTrue(run.stderr.contains("verified the staged release through \(cdn)"), run.stderr)
    }
}
