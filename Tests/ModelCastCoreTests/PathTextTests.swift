import Foundation
import XCTest
@testable import ModelCastCore
import ModelCastTestSupport

/// Issue 25, item 1: no path string may crash a command. Foundation's NSString path
/// methods trap on one-character strings on Linux; `PathText` replaces them everywhere.
final class PathTextTests: XCTestCase {
    func testEveryShapeOfPathHasALastComponentAndAParent() {
        let long = String(repeating: "n", count: 255)
        let cases: [(path: String, last: String, parent: String)] = [
            ("", "", ""), (".", ".", ""), ("..", "..", ""), ("/", "/", "/"), ("d", "d", ""), ("é", "é", ""),
            ("d/", "d", ""), ("./d", "d", "."), ("a/b", "b", "a"), ("a/b/", "b", "a"), ("/a", "a", "/"), ("//a", "a", "/"),
            ("a//b", "b", "a"), ("with space/x y", "x y", "with space"), ("模型/重み.gguf", "重み.gguf", "模型"),
            ("dir/" + long, long, "dir"), ("/tmp/x/", "x", "/tmp"), ("../d", "d", ".."),
        ]
        for item in cases {
            XCTAssertEqual(PathText.lastComponent(item.path), item.last, item.path.debugDescription)
            XCTAssertEqual(PathText.parent(item.path), item.parent, item.path.debugDescription)
        }
    }

    /// No source file calls the trapping NSString methods again.
    func testNoSourceUsesTheTrappingFoundationPathMethods() throws {
        let enumerator = FileManager.default.enumerator(atPath: repositoryRoot + "/Sources")
        var offenders: [String] = []
        while let file = enumerator?.nextObject() as? String {
            guard file.hasSuffix(".swift"), !file.hasSuffix("PathText.swift") else { continue }
            let text = try String(contentsOfFile: repositoryRoot + "/Sources/" + file, encoding: .utf8)
            if text.contains(").lastPathComponent") && text.contains("as NSString") || text.contains(").deletingLastPathComponent") && text.contains("as NSString") {
                offenders.append(file)
            }
        }
        XCTAssertEqual(offenders, [], "NSString's lastPathComponent / deletingLastPathComponent trap on one-character paths: use PathText")
    }
}
