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
