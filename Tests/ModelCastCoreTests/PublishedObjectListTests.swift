import Foundation
import XCTest
@testable import ModelCastCore
import ModelCastTestSupport

/// serve's first look at `_modelcast/objects.json`: no file means no list, but a file that
/// is there and cannot even be examined stops serve (it would otherwise serve every file
/// in the directory, as for a directory without a list).
final class PublishedObjectListTests: XCTestCase {
    func testAnObjectsFileThatCannotBeExaminedIsAnError() throws {
        let scratch = try Scratch()
        let root = scratch.at("site")
        try FileManager.default.createDirectory(atPath: root + "/_modelcast", withIntermediateDirectories: true)
        let list = PublishedObjectList(root: root, log: { _ in })
        XCTAssertNil(try list.loadFirst(), "no objects file: no list")
        // A link to itself: stat fails with ELOOP, which is no absence.
        XCTAssertEqual(symlink(root + "/_modelcast/objects.json", root + "/_modelcast/objects.json"), 0)
        XCTAssertThrowsError(try list.loadFirst()) { error in
            guard case ModelCastError.io(let operation, let path, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(operation, "stat")
            XCTAssertEqual(path, root + "/_modelcast/objects.json")
        }
    }
}
