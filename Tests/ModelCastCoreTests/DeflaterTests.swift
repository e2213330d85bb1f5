import Foundation
import XCTest
@testable import ModelCastCore

/// `Deflater` owns a zlib stream and its output buffer: a stream zlib will not start is an
/// archive error naming the model, and its memory is freed once.
final class DeflaterTests: XCTestCase {
    /// Level 10 is outside zlib's 0–9, so deflateInit2 refuses it (Z_STREAM_ERROR): the same
    /// path as a stream zlib cannot allocate.
    func testAStreamZlibRefusesIsAnErrorNamingTheModel() {
        XCTAssertThrowsError(try Deflater(displayPath: "models/M.mlpackage", level: 10)) { error in
            guard case ModelCastError.archive(let path, let message) = error else { return XCTFail("expected .archive, got \(error)") }
            XCTAssertEqual(path, "models/M.mlpackage")
            XCTAssertTrue(message.contains("deflateInit2"), message)
        }
    }
}
