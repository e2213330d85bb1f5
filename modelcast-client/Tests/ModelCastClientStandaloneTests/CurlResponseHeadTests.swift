#if os(Linux)
import Foundation
import FoundationNetworking
import XCTest
@testable import ModelCastClient

/// The response head `CurlTransport` builds from libcurl's header lines.
final class CurlResponseHeadTests: XCTestCase {
    private func head(_ lines: [String]) -> CurlResponseHead {
        var head = CurlResponseHead()
        for line in lines { Array(line.utf8).withUnsafeBytes { head.add($0) } }
        return head
    }

    /// Lines come with their CRLF, which is no part of a value; names are found in any case.
    func testValuesLoseTheirLineEndAndNamesAreFoundInAnyCase() throws {
        let head = head(["HTTP/1.1 206 Partial Content\r\n", "Content-Range: bytes 5-9/10\r\n", "etag:  \"abc\"\r\n", "\r\n"])
        let response = try XCTUnwrap(head.response(url: URL(string: "http://h/f")!, status: 206))
        XCTAssertEqual(response.statusCode, 206)
        XCTAssertEqual(response.value(forHTTPHeaderField: "content-range"), "bytes 5-9/10")
        XCTAssertEqual(response.value(forHTTPHeaderField: "ETag"), "\"abc\"")
    }

    /// A status line starts a new head: what a redirect or an interim 100 said is not the
    /// final answer's.
    func testAStatusLineStartsANewHead() throws {
        let head = head(["HTTP/1.1 302 Found\r\n", "Location: /g\r\n", "Content-Length: 145\r\n", "\r\n",
                         "HTTP/2 200\r\n", "content-length: 10\r\n", "\r\n"])
        let response = try XCTUnwrap(head.response(url: URL(string: "http://h/g")!, status: 200))
        XCTAssertNil(response.value(forHTTPHeaderField: "Location"))
        XCTAssertEqual(response.value(forHTTPHeaderField: "Content-Length"), "10")
        XCTAssertEqual(head.version, "HTTP/2")
    }

    /// A field sent twice reads as one list; a folded line continues the field before it.
    func testRepeatedAndFoldedFields() throws {
        let head = head(["HTTP/1.1 200 OK\r\n", "Cache-Control: no-cache\r\n", "cache-control: no-store\r\n", "X-Note: one\r\n", "\t two\r\n", "\r\n"])
        let response = try XCTUnwrap(head.response(url: URL(string: "http://h/f")!, status: 200))
        XCTAssertEqual(response.value(forHTTPHeaderField: "Cache-Control"), "no-cache, no-store")
        XCTAssertEqual(response.value(forHTTPHeaderField: "X-Note"), "one two")
    }
}
#endif
