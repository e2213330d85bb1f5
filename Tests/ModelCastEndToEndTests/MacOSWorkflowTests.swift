import Foundation
import XCTest
import Yams
import ModelCastTestSupport

/// The macOS workflow (.github/workflows/macos.yml) has never run on a macOS runner; its
/// smoke step at least runs here, as written, so its commands and flags stay real: the
/// one liberty is the binary, the debug build instead of `swift build --show-bin-path`.
final class MacOSWorkflowTests: XCTestCase {
    func testSmokeStepRunsAsWritten() throws {
        let text = try String(contentsOfFile: repositoryRoot + "/.github/workflows/macos.yml", encoding: .utf8)
        let document = try XCTUnwrap(try Yams.load(yaml: text) as? [String: Any])
        let job = try XCTUnwrap((document["jobs"] as? [String: Any])?["cli"] as? [String: Any])
        let steps = try XCTUnwrap(job["steps"] as? [[String: Any]])
        let smoke = try XCTUnwrap(steps.first { ($0["name"] as? String)?.hasPrefix("Smoke run") == true }?["run"] as? String)
        let binLine = try XCTUnwrap(smoke.split(separator: "\n").first { $0.hasPrefix("bin=") })
        XCTAssertTrue(binLine.contains("swift build --product modelcast --show-bin-path"), String(binLine))
        let script = smoke.replacingOccurrences(of: String(binLine), with: "bin='\(modelcastBinary)'")
        let result = try runProcess("/bin/bash", ["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        XCTAssertTrue(result.stdout.contains("OK: "), result.stdout)
    }
}
