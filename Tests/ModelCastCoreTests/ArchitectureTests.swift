import Foundation
import XCTest
import ModelCastTestSupport

/// The house rules of the source tree (issue 12): the core's folders form a one-way
/// stack, and only Storage/ knows which kinds of target exist.
final class ArchitectureTests: XCTestCase {
    /// `scripts/folder-deps` finds no pair of folders that use each other's names.
    func testCoreFoldersFormAOneWayStack() throws {
        let result = try runProcess("/usr/bin/env", ["python3", repositoryRoot + "/scripts/folder-deps"])
        XCTAssertEqual(result.status, 0, "folders that depend on each other:\n" + result.stdout.split(separator: "\n").filter { $0.hasPrefix("CYCLE") }.joined(separator: "\n"))
        // The stack the README describes, checked edge by edge: nothing below uses what is above.
        let order = ["Support", "Digest", "Formats", "Packaging", "Manifest", "Signing", "Storage", "Hosting", "Target", "Publish", "Verify"]
        for line in result.stdout.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count >= 3, parts[1] == "->", let from = order.firstIndex(of: String(parts[0])),
                  let to = order.firstIndex(of: String(parts[2].dropLast())) else { continue }
            XCTAssertLessThan(to, from, "\(line): a folder uses one above it in the stack")
        }
    }

    /// No code outside Storage/ names a concrete target or downcasts a Storage.
    func testOnlyStorageNamesConcreteTargets() throws {
        let sources = repositoryRoot + "/Sources"
        let enumerator = try XCTUnwrap(FileManager.default.enumerator(atPath: sources))
        var offenders: [String] = []
        while let relative = enumerator.nextObject() as? String {
            guard relative.hasSuffix(".swift"), !relative.hasPrefix("ModelCastCore/Storage/") else { continue }
            let text = try String(contentsOfFile: sources + "/" + relative, encoding: .utf8)
            for name in ["DirectoryStorage", "S3Storage"] where text.contains(name) { offenders.append("\(relative) names \(name)") }
        }
        XCTAssertEqual(offenders, [])
    }
}
