import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// docs/install.md's Python examples run as written, one after the other, against a real S3
/// API (moto) and the debug binary. The first publishes to `s3://models/prod` with
/// `verify_url`, so the staged release is verified through the public URL before it goes
/// live, then verifies the live release with the public key; the second promotes the beta
/// channel (published here first) to stable on 10 % of devices; the third simulates that
/// rollout, raises it to 50 % and completes it. Only the hosts change: the CDN is moto's own
/// URL of the bucket (plain http, hence `allow_http=True` on the first example's verify).
final class InstallPagePythonExampleTests: XCTestCase {
    /// The page's ```python blocks, in order.
    func examples() throws -> [String] {
        let page = try String(contentsOfFile: repositoryRoot + "/docs/install.md", encoding: .utf8)
        let blocks = page.components(separatedBy: "```python\n").dropFirst().map { $0.components(separatedBy: "\n```").first ?? "" }
        XCTAssertEqual(blocks.count, 3, "docs/install.md's Python examples: publish and verify, promote, rollout (each runs here)")
        return blocks
    }

    /// `text` with `old` replaced by `new`, failing unless it occurs `times` times (the page
    /// changed: the substitution needs a look).
    func replacing(_ text: String, _ old: String, _ new: String, times: Int = 1) -> String {
        XCTAssertEqual(text.components(separatedBy: old).count - 1, times, "\(old) in the example")
        return text.replacingOccurrences(of: old, with: new)
    }

    func testThePythonExamplesPublishVerifyPromoteAndRollOut() throws {
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
        let examples = try examples()
        guard examples.count == 3 else { return }
        var script = examples[0]
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

        // Promote: a beta channel first, with the next version, signed with the same key.
        let beta = try modelcast(["publish", "tiny-llm=" + work.at("run/out/tiny-llm.gguf"), "tiny-llm=" + work.at("run/out/tiny-llm-mmproj.gguf"),
                                  "--version", "1.5.0", "--channel", "beta", "--to", "s3://models/prod", "--base-url", cdn], environment: environment)
        XCTAssertEqual(beta.status, 0, beta.stderr)
        let promote = try runProcess("/usr/bin/env", ["python3", "-c", examples[1]], cwd: work.at("run"), environment: environment)
        XCTAssertEqual(promote.status, 0, promote.stdout + promote.stderr)
        XCTAssertEqual(promote.stdout, "sequence 2: 10% on the candidate\n", promote.stderr)

        // The rollout: simulated at 10 %, raised to 50 %, completed.
        let rollout = try runProcess("/usr/bin/env", ["python3", "-c", examples[2]], cwd: work.at("run"), environment: environment)
        XCTAssertEqual(rollout.status, 0, rollout.stdout + rollout.stderr)
        let lines = rollout.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 2, rollout.stdout)
        XCTAssertTrue(lines.first?.hasSuffix("% of devices on {'tiny-llm': '1.5.0'}") ?? false, rollout.stdout)
        let share = Double(lines.first?.split(separator: "%").first ?? "") ?? -1
        XCTAssertTrue((8...12).contains(share), "about 10 % of the synthetic devices: \(rollout.stdout)")
        XCTAssertEqual(lines.last, "sequence 4: the candidate for every device")
        let history = try modelcast(["history", "s3://models/prod", "--json"], environment: environment)
        let releases = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [String: Any])?["releases"] as? [[String: Any]])
        XCTAssertEqual(releases.compactMap { $0["action"] as? String }, ["rollout-complete", "rollout", "rollout", "publish"], history.stdout)
        XCTAssertEqual(releases.first?["versions"] as? [String: String], ["tiny-llm": "1.5.0"])
        let verify = try modelcast(["verify", "s3://models/prod", "--allow-http", "--json"], environment: environment)
        XCTAssertEqual(verify.status, 0, "every channel is whole and signed: \(verify.stdout)")
    }
}
