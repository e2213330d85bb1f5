import Foundation
import XCTest
import ModelCastTestSupport

/// Issue 25, item 5: `publish --config FILE --version 1.3.0` moved an unchanged model
/// from 0.3.0 to 1.3.0, so every device downloaded the same bytes again. The config
/// names each model's version: the combination is refused, naming the models, and
/// nothing is written; `NAME=PATH --version` still versions the one model named.
final class ConfigVersionCLITests: XCTestCase {
    func testVersionOverAConfigsVersionsIsRefused() throws {
        let work = try Scratch()
        let a = try work.write("a.bin", patternBytes(1000, seed: 1))
        let b = try work.write("b.bin", patternBytes(1000, seed: 2))
        let config = try work.write("modelcast.yml", text: """
            base_url: https://cdn.example.com/m
            models:
              a:
                version: 0.3.0
                files: [\(a)]
              b:
                version: 1.2.0
                files: [\(b)]
            """)
        let site = work.at("site")
        let refused = try modelcast(["publish", "--config", config, "--version", "1.3.0", "--to", site])
        XCTAssertEqual(refused.status, 1, refused.stderr)
        for fragment in ["--version 1.3.0", "a 0.3.0", "b 1.2.0", "NAME=PATH"] { XCTAssertTrue(refused.stderr.contains(fragment), "missing \(fragment): \(refused.stderr)") }
        XCTAssertFalse(FileManager.default.fileExists(atPath: site), "nothing written")
        XCTAssertEqual(try modelcast(["publish", "--config", config, "--to", site]).status, 0)
        let one = try modelcast(["publish", "--config", config, "b=" + b, "--version", "1.3.0", "--to", site])
        XCTAssertEqual(one.status, 0, one.stderr)
        let manifest = try String(contentsOfFile: site + "/manifest.json", encoding: .utf8)
        XCTAssertTrue(manifest.contains("models/a/0.3.0/") && manifest.contains("models/b/1.3.0/"), manifest)
    }
}

/// Issue 26, item 6: a config file's scalars are kept as written. An unquoted
/// `min_app_version: 2.10` was read as the number 2.1, and `version: 1.10` failed as
/// "not a semantic version" only by luck of the missing patch.
final class ConfigScalarsAsWrittenTests: XCTestCase {
    func testUnquotedVersionsKeepTheirDigits() throws {
        let work = try Scratch()
        let gguf = repositoryRoot + "/examples/models/tiny-llm.gguf"
        let config = try work.write("modelcast.yml", text: """
            base_url: https://cdn.example.com/m
            min_app_version: 2.10
            models:
              tiny-llm:
                version: 1.10.0
                files: [\(gguf)]
                meta:
                  accuracy: 0.950
                  classes: 10
            """)
        let result = try modelcast(["publish", "--config", config, "--to", work.at("site")])
        XCTAssertEqual(result.status, 0, result.stderr)
        let manifest = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: work.at("site/manifest.json")))) as? [String: Any])
        XCTAssertEqual(manifest["min_app_version"] as? String, "2.10", "as written, not 2.1")
        // Values with no string field to go to are still numbers, as YAML types them.
        let meta = ((manifest["models"] as? [String: Any])?["tiny-llm"] as? [String: Any])?["meta"] as? [String: Any]
        XCTAssertEqual(meta?["accuracy"] as? Double, 0.95)
        XCTAssertEqual(meta?["classes"] as? Int, 10)
    }
}
