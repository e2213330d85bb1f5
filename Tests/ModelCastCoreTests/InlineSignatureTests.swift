import Foundation
import XCTest
@testable import ModelCastCore

/// The inline signature's byte rule and the trusted comment's format.
final class InlineSignatureTests: XCTestCase {
    func manifest(_ note: String) -> Data {
        Data(JSONValue.object([
            .init("format", .string("modelcast-manifest")),
            .init("meta", .object([.init("note", .string(note))])),
            .init("sequence", .int(7)),
        ]).serialized().utf8)
    }

    func testAttachThenSplitGivesBackTheSignedBytes() throws {
        // A value holding the marker's text (escaped by JSON) does not confuse the cut.
        for note in ["plain", ",\n  \"signature\": {}", "ends with }\n}\n"] {
            let unsigned = manifest(note)
            XCTAssertNil(InlineSignature.split(unsigned), "no signature yet")
            let member = JSONValue.object([.init("format", .string("minisign")), .init("signature", .string("AAAA"))])
            let signed = try InlineSignature.attach(member, to: unsigned)
            let parts = try XCTUnwrap(InlineSignature.split(signed))
            XCTAssertEqual(parts.signed, unsigned)
            XCTAssertEqual(InlineSignature.strip(signed), unsigned)
            XCTAssertEqual(try JSONValue(parsing: parts.member)["signature"]?.stringValue, "AAAA")
            XCTAssertTrue(String(decoding: signed, as: UTF8.self).hasSuffix("\"signature\": \"AAAA\"\n  }\n}\n"))
            // Attaching twice is refused: a signed manifest is not what gets signed.
            XCTAssertThrowsError(try InlineSignature.attach(member, to: signed))
        }
        XCTAssertThrowsError(try InlineSignature.attach(.string("x"), to: Data("{\"a\": 1}".utf8)))
    }

    func testSignatureFileFromAMemberRefusesLineBreaksAndMissingFields() throws {
        let good = Data(#"{"format": "minisign", "signature": "S", "trusted_comment": "c", "global_signature": "G"}"#.utf8)
        XCTAssertEqual(try InlineSignature.signatureFile(fromMember: good), "untrusted comment: inline signature\nS\ntrusted comment: c\nG\n")
        let injected = Data(#"{"format": "minisign", "signature": "S", "trusted_comment": "c\ntrusted comment: evil", "global_signature": "G"}"#.utf8)
        XCTAssertThrowsError(try InlineSignature.signatureFile(fromMember: injected)) { XCTAssertTrue("\($0)".contains("line break"), "\($0)") }
        let missing = Data(#"{"format": "minisign", "signature": "S"}"#.utf8)
        XCTAssertThrowsError(try InlineSignature.signatureFile(fromMember: missing)) { XCTAssertTrue("\($0)".contains("global_signature"), "\($0)") }
    }

    func testTrustedCommentRoundTripsAndRejectsOtherComments() {
        let comment = TrustedComment(timestamp: 1_795_326_294, file: "manifest.json", sequence: 3, version: "1.2.0", expiresAt: "2026-12-22T05:44:54Z")
        XCTAssertEqual(comment.text, "timestamp:1795326294\tfile:manifest.json\tsequence:3\tversion:1.2.0\texpires:2026-12-22T05:44:54Z")
        XCTAssertEqual(TrustedComment(parsing: comment.text), comment)
        var never = comment
        never.expiresAt = nil
        XCTAssertEqual(TrustedComment(parsing: never.text)?.expiresAt, nil)
        XCTAssertTrue(never.text.hasSuffix("expires:never"))
        XCTAssertNil(TrustedComment(parsing: "timestamp:1795326294\tfile:manifest.json\thashed"), "minisign's default comment")
        XCTAssertNil(TrustedComment(parsing: "signed by hand"))
    }

    func testDurations() throws {
        XCTAssertEqual(try parseDuration("30d"), 30 * 86_400)
        XCTAssertEqual(try parseDuration("12h"), 12 * 3600)
        XCTAssertEqual(try parseDuration("2w"), 14 * 86_400)
        for bad in ["", "d", "0d", "-1d", "1.5d", "30", "30y"] {
            XCTAssertThrowsError(try parseDuration(bad)) { XCTAssertTrue("\($0)".contains("'\(bad)'"), "\($0)") }
        }
    }
}
