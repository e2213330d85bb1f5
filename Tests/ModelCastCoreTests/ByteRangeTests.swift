import Foundation
import XCTest
@testable import ModelCastCore

/// serve's reading of Range, If-Range, If-None-Match and HTTP dates (RFC 9110), case by case.
final class ByteRangeTests: XCTestCase {
    func answer(_ header: String?, _ size: Int64 = 1122) -> ByteRangeAnswer { ByteRangeAnswer.forRange(header, size: size) }

    func testSingleRanges() {
        XCTAssertEqual(answer(nil), .whole)
        XCTAssertEqual(answer("bytes=0-0"), .partial(0...0))
        XCTAssertEqual(answer("bytes=0-99"), .partial(0...99))
        XCTAssertEqual(answer("bytes=100-"), .partial(100...1121))
        XCTAssertEqual(answer("bytes=1121-"), .partial(1121...1121))
        XCTAssertEqual(answer("bytes=1000-5000"), .partial(1000...1121), "last-pos clamped to size - 1")
        XCTAssertEqual(answer("bytes=-5"), .partial(1117...1121), "the last 5 bytes, not the first 6")
        XCTAssertEqual(answer("bytes=-1122"), .partial(0...1121))
        XCTAssertEqual(answer("bytes=-99999"), .partial(0...1121))
        XCTAssertEqual(answer("bytes=00-01"), .partial(0...1))
        XCTAssertEqual(answer("Bytes=0-1"), .partial(0...1), "the unit is case-insensitive")
        XCTAssertEqual(answer("bytes= 0-1 "), .partial(0...1), "whitespace around a list element")
        XCTAssertEqual(answer("bytes=0-1,"), .partial(0...1), "empty list elements are allowed")
        XCTAssertEqual(answer("bytes=,,0-1"), .partial(0...1))
        XCTAssertEqual(answer("bytes=0-99999999999999999999999999"), .partial(0...1121), "beyond Int64: saturates, then clamps")
        XCTAssertEqual(answer("bytes=-99999999999999999999999999"), .partial(0...1121))
    }

    func testUnsatisfiable() {
        XCTAssertEqual(answer("bytes=1122-"), .unsatisfiable, "first-pos must be below the length")
        XCTAssertEqual(answer("bytes=1122-2000"), .unsatisfiable)
        XCTAssertEqual(answer("bytes=99999999999999999999999999-"), .unsatisfiable)
        XCTAssertEqual(answer("bytes=-0"), .unsatisfiable)
        XCTAssertEqual(answer("bytes=-000"), .unsatisfiable)
        XCTAssertEqual(answer("bytes=0-", 0), .unsatisfiable, "nothing to start at in an empty file")
        XCTAssertEqual(answer("bytes=-0", 0), .unsatisfiable)
    }

    func testIgnored() {
        for header in ["bytes=5-2", "bytes=abc", "bytes=0-1,3-4", "bytes=0-1, 1122-", "items=0-1", "bytes", "bytes=", "bytes=-",
                       "bytes=1-2-3", "bytes=+1-2", "bytes=0x10-", "bytes=1 -2", "bytes=-5-", "bytes=0-1;x", "bytes=٣-٤", "bytes=0-1, bytes=3-4", "=0-1"] {
            XCTAssertEqual(answer(header), .whole, header)
        }
        // A suffix of an empty file is satisfiable but has no first-last to name: the (empty) whole.
        XCTAssertEqual(answer("bytes=-5", 0), .whole)
    }

    func testEntityTags() {
        let etag = HTTPValidators.entityTag(inode: 0x1234, modifiedSeconds: 2, modifiedNanoseconds: 5, size: 1024)
        XCTAssertEqual(etag, "\"1234-77359405-400\"")
        XCTAssertNotEqual(etag, HTTPValidators.entityTag(inode: 0x1234, modifiedSeconds: 2, modifiedNanoseconds: 6, size: 1024), "nanoseconds count")
        XCTAssertNotEqual(etag, HTTPValidators.entityTag(inode: 0x1235, modifiedSeconds: 2, modifiedNanoseconds: 5, size: 1024), "a replaced file differs")

        XCTAssertTrue(HTTPValidators.noneMatchHits(etag, etag: etag))
        XCTAssertTrue(HTTPValidators.noneMatchHits("W/" + etag, etag: etag), "If-None-Match compares weakly")
        XCTAssertTrue(HTTPValidators.noneMatchHits("\"a\", W/\"b\" ,\(etag)", etag: etag))
        XCTAssertTrue(HTTPValidators.noneMatchHits(" * ", etag: etag))
        XCTAssertFalse(HTTPValidators.noneMatchHits("\"a\", \"b\"", etag: etag))
        XCTAssertFalse(HTTPValidators.noneMatchHits("\"a,\(etag.dropFirst())", etag: etag), "a comma inside a tag does not split it")
        XCTAssertFalse(HTTPValidators.noneMatchHits("", etag: etag))

        let seconds = 784_111_777  // Sun, 06 Nov 1994 08:49:37 GMT
        XCTAssertTrue(HTTPValidators.ifRangeMatches(etag, etag: etag, modifiedSeconds: seconds))
        XCTAssertFalse(HTTPValidators.ifRangeMatches("W/" + etag, etag: etag, modifiedSeconds: seconds), "If-Range compares strongly")
        XCTAssertFalse(HTTPValidators.ifRangeMatches("\"other\"", etag: etag, modifiedSeconds: seconds))
        XCTAssertTrue(HTTPValidators.ifRangeMatches("Sun, 06 Nov 1994 08:49:37 GMT", etag: etag, modifiedSeconds: seconds))
        XCTAssertFalse(HTTPValidators.ifRangeMatches("Sun, 06 Nov 1994 08:49:38 GMT", etag: etag, modifiedSeconds: seconds))
        XCTAssertFalse(HTTPValidators.ifRangeMatches("yesterday", etag: etag, modifiedSeconds: seconds))
    }

    func testHTTPDates() {
        XCTAssertEqual(HTTPValidators.imfFixdate(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT")
        XCTAssertEqual(HTTPValidators.imfFixdate(0), "Thu, 01 Jan 1970 00:00:00 GMT")
        XCTAssertEqual(HTTPValidators.imfFixdate(951_782_400), "Tue, 29 Feb 2000 00:00:00 GMT")
        // The three forms a recipient must accept (RFC 9110 §5.6.7).
        XCTAssertEqual(HTTPValidators.httpDate("Sun, 06 Nov 1994 08:49:37 GMT"), 784_111_777)
        XCTAssertEqual(HTTPValidators.httpDate("Sunday, 06-Nov-94 08:49:37 GMT"), 784_111_777)
        XCTAssertEqual(HTTPValidators.httpDate("Sun Nov  6 08:49:37 1994"), 784_111_777)
        XCTAssertEqual(HTTPValidators.httpDate("Tue, 29 Feb 2000 00:00:00 GMT"), 951_782_400)
        XCTAssertEqual(HTTPValidators.httpDate("Thu, 01 Jan 1970 00:00:00 GMT"), 0)
        XCTAssertEqual(HTTPValidators.httpDate("Fri, 31 Dec 2100 23:59:59 GMT"), 4_133_980_799)
        // Every day of 1970 to 2400 round-trips through the formatter.
        for day in stride(from: 0, to: 157_000, by: 37) {
            let seconds = day * 86400 + 3723
            XCTAssertEqual(HTTPValidators.httpDate(HTTPValidators.imfFixdate(seconds)), seconds, HTTPValidators.imfFixdate(seconds))
        }
        for bad in ["", "Sun, 06 Nov 1994 08:49:37", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 32 Nov 1994 08:49:37 GMT",
                    "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 8:49:37 GMT", "Sun, 06 Nov +994 08:49:37 GMT", "1994-11-06T08:49:37Z"] {
            XCTAssertNil(HTTPValidators.httpDate(bad), bad)
        }
    }
}
