import Foundation
import XCTest
import ModelCastTestSupport
@testable import ModelCastCore

/// Issue 48, item 5: verify, report and rollout simulate read SOURCE through one resolver
/// (`ReadSource`) and one scope (`withSource`) that closes what it opened on every path.
final class SourceResolverCLITests: XCTestCase {
    /// An environment with no AWS credentials at all (a HOME with no ~/.aws).
    func bareEnvironment(_ work: Scratch) -> [String: String] {
        ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "HOME": work.path]
    }

    /// `verify URL --origin s3://…` whose origin cannot be opened (no credentials) fails
    /// with the origin's error and its exit status. The HTTP client it had made was left
    /// open on that path, and the debug binary trapped ("Client not shut down") instead.
    func testAVerifyWhoseOriginCannotBeOpenedClosesItsClientAndSaysWhy() throws {
        let work = try Scratch()
        let result = try modelcast(["verify", "https://cdn.example.invalid/ml/manifest.json", "--origin", "s3://models/ml"],
                                   cwd: work.path, environment: bareEnvironment(work))
        // Missing credentials end every S3 command with 3 (docs/output.md).
        XCTAssertEqual(result.status, 3, "\(result.stdout)\(result.stderr)")
        XCTAssertTrue(result.stderr.contains("no AWS credentials"), result.stderr)
        XCTAssertFalse(result.stderr.contains("not shut down"), result.stderr)
    }

    /// Every command that reads a SOURCE refuses the same bad values the same way: named,
    /// control characters escaped, a password never shown, a mistyped scheme explained.
    func testEveryCommandRefusesABadSourceTheSameWay() throws {
        let work = try Scratch()
        let commands: [[String]] = [["verify"], ["report"], ["rollout", "simulate"]]
        let cases: [(String, String)] = [
            ("gs://bucket/models", "did you mean s3://bucket/models?"),
            ("https://deploy:hunter2@cdn.example.com/ml/manifest.json", "'https://<redacted>@cdn.example.com/ml/manifest.json' carries a user name or password"),
            ("site\u{1b}[2J", "SOURCE 'site\\u{1b}[2J' holds a control character"),
        ]
        for command in commands {
            for (source, message) in cases {
                let result = try modelcast(command + [source], cwd: work.path, environment: bareEnvironment(work))
                XCTAssertEqual(result.status, 1, "\(command) \(source): \(result.stderr)")
                XCTAssertTrue(result.stderr.contains(message), "\(command) \(source): \(result.stderr)")
                XCTAssertFalse(result.stderr.contains("hunter2") || result.stdout.contains("hunter2"), "\(command): the password was printed")
                XCTAssertEqual(result.stdout, "", "\(command) \(source)")
            }
        }
    }

    /// `verify s3://` reads the Content-Encoding the store keeps with each object: an
    /// artifact another tool stored gzip-encoded fails as it does through its URL (the
    /// store's headers used to leave the encoding out, and the check passed silently).
    func testABucketObjectStoredEncodedFailsTheEncodingCheck() throws {
        let moto = try MotoS3()
        let work = try Scratch()
        let model = work.at("m.bin")
        try Data("model bytes\n".utf8).write(to: URL(fileURLWithPath: model))
        let published = try modelcast(["publish", model, "--name", "m", "--version", "1.0.0", "--base-url", "https://cdn.example.com/ml", "--to", "s3://models/ml"],
                                      environment: moto.environment)
        XCTAssertEqual(published.status, 0, published.stderr)
        let key = "models/m/1.0.0/m.bin"
        try moto.awsCLI(["s3api", "put-object", "--bucket", moto.bucket, "--key", "ml/" + key, "--body", model, "--content-encoding", "gzip",
                         "--cache-control", CachePolicy.immutable, "--content-type", "application/octet-stream"])
        let (result, report) = try verifyJSON(["s3://models/ml"], environment: moto.environment)
        XCTAssertEqual(result.status, 1, result.stdout + result.stderr)
        XCTAssertEqual(checks(report, "artifact.content-encoding", .fail).map(\.detail),
                       ["m 1.0.0/m.bin: gzip: devices would hash encoded bytes or lose Range resumption; serve it as stored"], result.stdout)
    }
}
