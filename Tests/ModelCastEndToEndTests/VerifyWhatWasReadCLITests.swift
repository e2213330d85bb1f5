import Foundation
import XCTest
import ModelCastTestSupport

/// Issue 25, items 10 and 11: verify says what it actually read, and a release built for
/// production can be previewed through `serve`.
final class VerifyWhatWasReadCLITests: XCTestCase {
    /// Item 11: `verify DIR` read files, not URLs: it printed `HTTP 200` and "206 for bytes
    /// 0-99" for things read from disk, and its JSON source was the CDN's URL.
    func testVerifyOfADirectoryReportsTheFilesItRead() throws {
        let work = try Scratch()
        let site = work.at("site")
        XCTAssertEqual(try modelcast(["publish", repositoryRoot + "/examples/models/tiny-llm.gguf", "--version", "1.0.0",
                                      "--base-url", "https://cdn.example.com/models", "--to", site]).status, 0)
        let (result, report) = try verifyJSON([site])
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        let parsed = try XCTUnwrap(report, result.stdout)
        XCTAssertEqual(parsed.source, site + "/manifest.json", "the source is the file read")
        for check in parsed.checks {
            XCTAssertFalse(check.subject.hasPrefix("https://"), "\(check.check) names a URL it never fetched: \(check.subject)")
            XCTAssertTrue(check.subject.hasPrefix(site + "/"), "\(check.check): \(check.subject)")
            XCTAssertFalse(check.detail.contains("HTTP 200") || check.detail.contains("206"), "\(check.check) claims an HTTP answer: \(check.detail)")
        }
        XCTAssertEqual(checks(parsed, "artifact.range", .pass).first.map { $0.detail.contains("read from the file") }, true,
                       "the range check says what it did: \(parsed.checks.map(\.detail))")
        // The human report names the directory, and the URL it will be served at.
        let human = try modelcast(["verify", site])
        XCTAssertEqual(human.status, 0)
        let header = human.stdout.split(separator: "\n").first.map(String.init) ?? ""
        XCTAssertTrue(header.hasPrefix("verify \(site)/manifest.json") && header.contains("served as https://cdn.example.com/models/manifest.json"), header)
        try validateAgainstSchema([result.stdout], "verify-report.schema.json")
    }

    /// Item 10: a release published for https://cdn.example.com/models is previewed with
    /// `serve`, and `verify --stand-in-for` fetches its objects there instead of the CDN.
    func testAProductionReleaseIsVerifiedThroughServe() throws {
        let work = try Scratch()
        let site = work.at("site")
        let production = "https://cdn.example.com/models"
        XCTAssertEqual(try modelcast(["publish", repositoryRoot + "/examples/models/tiny-llm.gguf", "--version", "1.0.0",
                                      "--base-url", production, "--to", site]).status, 0)
        let server = try BackgroundProcess(modelcastBinary, ["serve", site, "--port", "0"])
        let local = server.firstLine
        XCTAssertTrue(local.hasPrefix("http://127.0.0.1:") && local.hasSuffix("/models"), local)
        // Without it, the objects lie outside the served prefix.
        let (plain, _) = try verifyJSON([local + "/manifest.json", "--allow-http"])
        XCTAssertEqual(plain.status, 1)
        let (result, report) = try verifyJSON([local + "/manifest.json", "--stand-in-for", production])
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        let parsed = try XCTUnwrap(report)
        XCTAssertEqual(checks(parsed, "artifact.sha256", .pass).count, 1, result.stdout)
        XCTAssertEqual(checks(parsed, "artifact.range", .pass).count, 1, "a real HTTP server answered the range: \(result.stdout)")
        for check in parsed.checks {
            XCTAssertFalse(check.subject.hasPrefix("https://cdn.example.com"), "\(check.check) was read from \(local), not \(check.subject)")
        }
        // serve says how to do it when the directory was published for another host.
        XCTAssertTrue(server.standardError.contains("--stand-in-for \(production)"), server.standardError)
        // A stand-in must be a base URL, and only stands in for URLs under it.
        let bad = try modelcast(["verify", local + "/manifest.json", "--stand-in-for", "cdn.example.com"])
        XCTAssertEqual(bad.status, 2, bad.stderr)
        XCTAssertTrue(bad.stderr.contains("'cdn.example.com'"), bad.stderr)
        withExtendedLifetime(server) {}
    }
}
