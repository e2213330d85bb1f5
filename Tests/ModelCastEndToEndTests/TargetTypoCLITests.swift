import Foundation
import XCTest
import ModelCastTestSupport

/// Issue 25, item 2: a mistyped bucket published into a local folder and exited 0
/// (`--to s3:/my-bucket/x`, `--to s3//my-bucket/x`, `--to my-bucket/prod`). Each is
/// refused, naming the value and what was probably meant, and nothing is created;
/// the README's `--to site` keeps working.
final class TargetTypoCLITests: XCTestCase {
    func testAMistypedBucketIsRefusedAndCreatesNothing() throws {
        let work = try Scratch()
        let cwd = work.at("pipeline")
        try FileManager.default.createDirectory(atPath: cwd, withIntermediateDirectories: true)
        let gguf = repositoryRoot + "/examples/models/tiny-llm.gguf"
        let cases: [(target: String, says: [String])] = [
            ("s3:/my-bucket/x", ["'s3:/my-bucket/x'", "did you mean s3://my-bucket/x?"]),
            ("s3//my-bucket/x", ["'s3//my-bucket/x'", "did you mean s3://my-bucket/x?"]),
            ("S3:my-bucket/x", ["'S3:my-bucket/x'", "did you mean s3://my-bucket/x?"]),
            ("https://cdn.example.com/models", ["'https://cdn.example.com/models'", "scheme 'https:'"]),
            ("my-bucket/prod", ["'my-bucket/prod'", "parent 'my-bucket' does not exist", "s3://my-bucket/prod"]),
            ("", ["the target is empty"]),
        ]
        for item in cases {
            let result = try modelcast(["publish", gguf, "--version", "1.0.0", "--base-url", "https://cdn.example.com/models", "--to", item.target], cwd: cwd)
            let label = "--to \(item.target.debugDescription): exit \(result.status)\n\(result.stderr)"
            XCTAssertEqual(result.status, 1, label)
            for fragment in item.says { XCTAssertTrue(result.stderr.contains(fragment), "\(label)\nmissing: \(fragment)") }
            XCTAssertFalse(result.stdout.contains("published"), label)
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: cwd), [], "\(label): nothing created")
            let json = try modelcast(["publish", gguf, "--version", "1.0.0", "--base-url", "https://cdn.example.com/models", "--to", item.target, "--json"], cwd: cwd)
            XCTAssertTrue(json.stdout.contains("\"error\""), "--json: " + json.stdout)
        }
        // The README's plain directory target.
        let site = try modelcast(["publish", gguf, "--version", "1.0.0", "--base-url", "https://cdn.example.com/models", "--to", "site"], cwd: cwd)
        XCTAssertEqual(site.status, 0, site.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: cwd + "/site/manifest.json"))
    }
}
