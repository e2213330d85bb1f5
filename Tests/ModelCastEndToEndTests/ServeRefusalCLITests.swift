import Foundation
import XCTest
import ModelCastTestSupport

/// Issue 25, item 9: `serve DIR` on a directory holding no published target served every
/// file in it (a `.py`, a `.yml`). It refuses to start there, naming what is missing.
final class ServeRefusalCLITests: XCTestCase {
    func testServeRefusesADirectoryWithNoPublishedTarget() throws {
        let work = try Scratch()
        try work.write("project/train.py", text: "print('secret')\n")
        try work.write("project/ci.yml", text: "token: x\n")
        let port = try freeLoopbackPort()
        let result = try modelcast(["serve", work.at("project"), "--port", String(port)])
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("_modelcast/objects.json") && result.stderr.contains(work.at("project")), result.stderr)
        XCTAssertTrue(result.stderr.contains("modelcast publish"), "says how to make one: \(result.stderr)")
    }
}
