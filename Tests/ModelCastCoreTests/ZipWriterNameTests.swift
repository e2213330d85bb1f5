import Foundation
import XCTest
@testable import ModelCastCore

/// A name a zip cannot hold is refused before any of its bytes are written, naming the entry.
final class ZipWriterNameTests: XCTestCase {
    func testANameOverTheZipLimitIsRefusedByName() throws {
        var written = 0
        let writer = try ZipWriter(compression: .store, displayPath: "models/M") { written += $0.count }
        let name = "M/" + String(repeating: "x", count: 0x1_0000) + "/"
        XCTAssertThrowsError(try writer.addDirectory(name: name)) { error in
            guard case ModelCastError.archive(let path, let message) = error else { return XCTFail("expected .archive, got \(error)") }
            XCTAssertEqual(path, "models/M")
            XCTAssertTrue(message.contains("'M/xxxxxxxx"), message)
            XCTAssertTrue(message.contains("65539 bytes"), message)
        }
        XCTAssertEqual(written, 0)
    }
}
