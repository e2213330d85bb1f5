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
        // A CRC-64/NVME (a multipart object's full-object checksum); a SHA-256 wins when both are there.
        let crc = CRC64NVME.checksum(Array("x".utf8))
        XCTAssertEqual(Checksum(["x-amz-checksum-crc64nvme": crc.base64, "x-amz-checksum-type": "FULL_OBJECT"]), .crc64nvme(crc))
        XCTAssertEqual(Checksum(["x-amz-checksum-crc64nvme": crc.base64, "x-amz-checksum-sha256": digest.base64, "x-amz-checksum-type": "FULL_OBJECT"]),
                       .fullObject(digest, declared: true))
        // moto without awscrt stores a CRC-32 under the CRC-64 name: 4 bytes, not a CRC-64. Nor is anything else.
        for hostile in ["AAAAAA==", "", "not base64", crc.base64 + "-3", "AAAAAAAAAAAAAA==", "\u{1b}[31m"] {
            XCTAssertEqual(Checksum(["x-amz-checksum-crc64nvme": hostile]), .none, hostile)
        }
    }

    /// What a HEAD reports against what was stored: each difference named, the store's
    /// text quoted (anyone who can write the object chose it), media type parameters ignored.
    func testStoredObjectDifferencesAreNamedAndQuoted() throws {
        let sha = try SHA256Hasher.digest(Array("x".utf8))
        let metadata = ObjectMetadata(cacheControl: "public, max-age=60", contentType: "application/json", size: 10, sha256: sha)
        let same = ObjectInfo(size: 10, sha256: sha, contentType: "application/json; charset=utf-8", cacheControl: "public, max-age=60")
        XCTAssertNil(same.difference(from: metadata))
        XCTAssertNil(ObjectInfo(size: 10).difference(from: metadata), "what a store does not report is not a difference")
        XCTAssertEqual(ObjectInfo(size: 9).difference(from: metadata), "9 bytes, expected 10")
        let other = try SHA256Hasher.digest(Array("y".utf8))
        XCTAssertEqual(ObjectInfo(size: 10, sha256: other).difference(from: metadata), "sha256 \(other.hex), expected \(sha.hex)")
        XCTAssertEqual(ObjectInfo(size: 10, cacheControl: "no-store\u{1b}[2J").difference(from: metadata),
                       "Cache-Control 'no-store\\u{1b}[2J', expected 'public, max-age=60'")
        XCTAssertEqual(ObjectInfo(size: 10, contentType: "text/html\u{202e}").difference(from: metadata),
                       "Content-Type 'text/html\\u{202e}', expected 'application/json'")
    }
}
