import Foundation
import XCTest
@testable import ModelCastCore
import ModelCastTestSupport

/// `--templates DIR`: a template whose rendered file would be no file inside the target
/// (".mustache" renders to `_modelcast/`, "..mustache" to `_modelcast/.`) is refused by
/// name when the templates are read, before anything is stored. It used to fail only at
/// the hosting-file write, in the middle of the commit, which then undid it.
final class HostingTemplatesTests: XCTestCase {
    func testATemplateNamedAsNoFileIsRefusedByName() throws {
        let scratch = try Scratch()
        for name in [".mustache", "..mustache"] {
            let directory = try scratch.mkdir("t\(name.count)")
            let path = try scratch.write("t\(name.count)/\(name)", text: "x")
            XCTAssertThrowsError(try HostingFiles.templates(overrideDirectory: directory), name) { error in
                let message = "\(error)"
                XCTAssertTrue(message.contains(path) && message.contains("no file name inside the target"), message)
                XCTAssertEqual((error as? ModelCastError)?.exitStatus, .refused, message)
            }
        }
        let fine = try scratch.mkdir("fine")
        try scratch.write("fine/extra.conf.mustache", text: "x")
        XCTAssertEqual(try HostingFiles.templates(overrideDirectory: fine)["extra.conf"], "x")
    }
}
