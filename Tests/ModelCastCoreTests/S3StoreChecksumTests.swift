import Foundation
import XCTest
@testable import ModelCastCore

/// How a HEAD's checksum headers are read: the forms AWS S3 sends (which moto does
/// not all produce) decide whether a checksum is compared directly, as a composite
/// over parts, or not at all.
final class S3StoreChecksumTests: XCTestCase {
    func testChecksumHeadersAreClassified() throws {
        let digest = try SHA256Hasher.digest(Array("x".utf8))
        typealias Checksum = S3Storage.StoreChecksum
        // A single PUT on AWS: a full-object checksum, declared as such.
        XCTAssertEqual(Checksum(["x-amz-checksum-sha256": digest.base64, "x-amz-checksum-type": "FULL_OBJECT", "etag": "\"abc\""]),
                       .fullObject(digest, declared: true))
        // Undeclared, with a plain ETag: taken as full-object (a mismatch is then confirmed by download).
        XCTAssertEqual(Checksum(["x-amz-checksum-sha256": digest.base64, "etag": "\"abc\""]), .fullObject(digest, declared: false))
        // AWS multipart: BASE64-N, and the type.
        XCTAssertEqual(Checksum(["x-amz-checksum-sha256": digest.base64 + "-3", "x-amz-checksum-type": "COMPOSITE", "etag": "\"abc-3\""]),
                       .composite(digest, parts: 3))
        XCTAssertEqual(Checksum(["x-amz-checksum-sha256": digest.base64 + "-12"]), .composite(digest, parts: 12))
        // moto multipart: no suffix, no type, a multipart ETag.
        XCTAssertEqual(Checksum(["x-amz-checksum-sha256": digest.base64, "etag": "\"0123abcd-24\""]), .composite(digest, parts: 24))
        XCTAssertEqual(Checksum(["x-amz-checksum-sha256": digest.base64, "x-amz-checksum-type": "composite"]), .composite(digest, parts: nil))
        // Nothing usable.
        XCTAssertEqual(Checksum([:]), .none)
        XCTAssertEqual(Checksum(["x-amz-checksum-sha256": "not base64!"]), .none)
        XCTAssertEqual(Checksum(["x-amz-checksum-sha256": Data([1, 2, 3]).base64EncodedString()]), .none)
        XCTAssertEqual(Checksum(["x-amz-checksum-crc32": "AAAAAA==", "x-amz-meta-sha256": digest.hex]), .none, "metadata is never a checksum")
    }
}
