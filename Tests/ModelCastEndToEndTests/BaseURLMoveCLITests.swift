import Foundation
import XCTest
import ModelCastTestSupport

/// Issue 25, item 3: a publish with another --base-url went live silently, its new
/// files on the new host and its rollback section on the old one. Another scheme, host
/// or path is refused naming both; `--move-base-url` moves on purpose and says what
/// must stay served at the old URL.
final class BaseURLMoveCLITests: XCTestCase {
    func testAnotherBaseURLNeedsMoveBaseURL() throws {
        let work = try Scratch()
        let site = work.at("site")
        func publish(_ version: String, _ base: String, _ extra: [String] = []) throws -> ProcessOutput {
            let file = try work.write("in/\(version).bin", patternBytes(2000, seed: UInt32(version.first!.asciiValue!)))
            return try PublishRun(["m=" + file], name: nil, version: version, baseURL: base, to: site, extra).run()
        }
        XCTAssertEqual(try publish("1.0.0", "https://c.example.com/m").status, 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json"))
        for other in ["https://other.example.net/x", "http://c.example.com/m", "https://c.example.com/n", "https://c.example.com"] {
            let result = try publish("2.0.0", other)
            let label = "\(other): exit \(result.status)\n\(result.stderr)"
            XCTAssertEqual(result.status, 1, label)
            for fragment in ["https://c.example.com/m", other, "--move-base-url"] { XCTAssertTrue(result.stderr.contains(fragment), "\(label)\nmissing \(fragment)") }
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json")), before, "\(label): nothing went live")
        }
        // The same base URL, however it is spelled, is no move.
        let same = try publish("2.0.0", "https://c.example.com/m/")
        XCTAssertEqual(same.status, 0, same.stderr)
        let moved = try publish("3.0.0", "https://other.example.net/x", ["--move-base-url"])
        XCTAssertEqual(moved.status, 0, moved.stderr)
        XCTAssertTrue(moved.stderr.contains("keep https://c.example.com/m serving") && moved.stderr.contains("models/m/2.0.0/"), moved.stderr)
        let manifest = try String(contentsOfFile: site + "/manifest.json", encoding: .utf8)
        XCTAssertTrue(manifest.contains("https://other.example.net/x/models/m/3.0.0/"), manifest)
    }
}
