import Foundation
import XCTest
import ModelCastCore

/// What every printed line passes through (issue 24, items 5 and 10).
final class TerminalTextTests: XCTestCase {
    func testCredentialsInURLsAreRedacted() {
        let cases: [(String, String)] = [
            ("https://user:secret@host/x", "https://<redacted>@host/x"),
            ("endpoint 'http://AKIA:s3cr3t@127.0.0.1:9' failed", "endpoint 'http://<redacted>@127.0.0.1:9' failed"),
            ("a https://u:p@a/x and s3://k:v@b?q", "a https://<redacted>@a/x and s3://<redacted>@b?q"),
            ("http://u:p@w@host", "http://<redacted>@host"),
            ("mail me@example.com, see https://host/a@b", "mail me@example.com, see https://host/a@b"),
            ("https://@host", "https://@host"),
            ("no url here @ all", "no url here @ all"),
            ("://@", "://@"),
        ]
        for (input, expected) in cases { XCTAssertEqual(redactingURLCredentials(input), expected, input) }
    }

    func testControlAndBidiCharactersAreEscaped() {
        XCTAssertEqual(terminalSafe("a\u{1B}[2J\tb\nc\u{07}\u{9B}\u{202E}\r"), "a\\u001b[2J\tb\nc\\u0007\\u009b\\u202e\\u000d")
        XCTAssertEqual(terminalSafe("plain Café 日本"), "plain Café 日本")
        XCTAssertEqual(terminalSafe("\u{E0001}"), "\\udb40\\udc01", "outside the BMP: a JSON surrogate pair")
    }
}
