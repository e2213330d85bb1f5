import Foundation
import XCTest
@testable import ModelCastCore
import ModelCastTestSupport

/// Verify's inflation: HTTP gzip and deflate bodies (`ContentDecoding`) and deflated zip
/// entries (`ZipEntryDigests`): good streams decode to their bytes; a stream whose checksum,
/// length or framing is wrong, that is cut short, that holds more than one gzip member or
/// that decodes past the limit is refused as undecodable, naming the URL.
final class ContentDecodingTests: XCTestCase {
    private let text = Array(String(repeating: "hello hello hello, modelcast\n", count: 3).utf8)
    // gzip -n (mtime 0) and zlib (RFC 1950) encodings of `text`, from Python's gzip and zlib.
    private let gzip: [UInt8] = [31, 139, 8, 0, 0, 0, 0, 0, 2, 3, 203, 72, 205, 201, 201, 87, 200, 64, 144, 58, 10, 185, 249, 41, 169, 57, 201, 137, 197, 37, 92, 25, 100, 75, 2, 0, 182, 171, 217, 51, 87, 0, 0, 0]
    private let zlib: [UInt8] = [120, 156, 203, 72, 205, 201, 201, 87, 200, 64, 144, 58, 10, 185, 249, 41, 169, 57, 201, 137, 197, 37, 92, 25, 100, 75, 2, 0, 123, 241, 31, 171]
    private let url = "http://127.0.0.1/m/manifest.json"

    private func decode(_ bytes: [UInt8], _ encoding: String, limit: Int = 1 << 20) throws -> [UInt8] {
        [UInt8](try ContentDecoding.decode(Data(bytes), encoding: encoding, url: url, limit: limit))
    }

    private func assertRefused(_ bytes: [UInt8], _ encoding: String, limit: Int = 1 << 20, _ fragment: String = "", file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try decode(bytes, encoding, limit: limit), file: file, line: line) { error in
            guard case ModelCastError.undecodableBody(let failedURL, let failedEncoding, let reason) = error else {
                return XCTFail("expected undecodableBody, got \(error)", file: file, line: line)
            }
            XCTAssertEqual(failedURL, url, file: file, line: line)
            XCTAssertEqual(failedEncoding, encoding, file: file, line: line)
            XCTAssertTrue(fragment.isEmpty || reason.contains(fragment), "'\(reason)' does not mention '\(fragment)'", file: file, line: line)
        }
    }

    func testGoodStreamsDecode() throws {
        XCTAssertEqual(try decode(gzip, "gzip"), text)
        XCTAssertEqual(try decode(gzip, "x-gzip"), text)
        XCTAssertEqual(try decode(zlib, "deflate"), text)
        XCTAssertEqual(try decode(zlib, " Deflate "), text)
    }

    func testAWrongChecksumOrLengthIsRefused() {
        var badCRC = gzip
        badCRC[gzip.count - 8] ^= 0x01
        assertRefused(badCRC, "gzip", "CRC-32")
        var badLength = gzip
        badLength[gzip.count - 4] ^= 0x01
        assertRefused(badLength, "gzip", "length field")
        var badAdler = zlib
        badAdler[zlib.count - 1] ^= 0x01
        assertRefused(badAdler, "deflate", "Adler-32")
    }

    func testCutShortOrCorruptStreamsAreRefused() {
        assertRefused(Array(gzip.prefix(gzip.count - 8)), "gzip")
        assertRefused(Array(gzip.prefix(20)), "gzip")
        assertRefused(Array(zlib.prefix(20)), "deflate")
        assertRefused(Array("not gzip at all, just text".utf8), "gzip")
        assertRefused(Array("not zlib".utf8), "deflate", "zlib stream")
        // A zlib header asking for a preset dictionary (FDICT, dictionary id 1), and one with a
        // 64 KiB window (CINFO 8, past RFC 1950's 7): devices' zlib refuses both.
        assertRefused([0x78, 0xbb, 0, 0, 0, 1] + zlib[2...], "deflate", "preset dictionary")
        assertRefused([0x88, 0x1c] + zlib[2...], "deflate", "window")
        var corrupt = gzip
        corrupt[12] ^= 0xff
        assertRefused(corrupt, "gzip")
    }

    func testSeveralGzipMembersAreRefused() {
        assertRefused(gzip + gzip, "gzip", "follow the end of the gzip stream")
    }

    func testABodyPastTheLimitIsRefused() {
        assertRefused(gzip, "gzip", limit: text.count - 1, "larger than")
        assertRefused(zlib, "deflate", limit: 10, "larger than")
        XCTAssertEqual(try decode(gzip, "gzip", limit: text.count), text)
    }

    func testOtherEncodingsAreRefusedByName() {
        assertRefused(gzip, "br", "verify decodes only gzip, deflate")
        assertRefused(gzip, "gzip, gzip")
    }

    /// Deflated entries of a zip are inflated to compare their SHA-256 (model signatures).
    func testDeflatedZipEntriesAreInflated() async throws {
        let scratch = try Scratch()
        let big = ZipWriterCase.text(300_000, seed: 11)
        try scratch.write("M.mlpackage/Data/com.apple.CoreML/model.mlmodel", big)
        let manifest = Array(#"{"rootModelIdentifier":"R","itemInfoEntries":{"R":{"path":"com.apple.CoreML/model.mlmodel"}}}"#.utf8)
        try scratch.write("M.mlpackage/Manifest.json", manifest)
        try scratch.write("M.mlpackage/empty", [])
        let packed = try Packer().pack(scratch.at("M.mlpackage"), options: PackOptions(output: scratch.at("m.zip"), compression: .deflate))
        let digests = try await ZipEntryDigests.digests(FileBytes(path: packed.path), maxEntries: 100)
        XCTAssertEqual(digests["M.mlpackage/Data/com.apple.CoreML/model.mlmodel"], try SHA256Hasher.digest(big))
        XCTAssertEqual(digests["M.mlpackage/Manifest.json"], try SHA256Hasher.digest(manifest))
        XCTAssertEqual(digests["M.mlpackage/empty"], try SHA256Hasher.digest([UInt8]()))
    }
}
