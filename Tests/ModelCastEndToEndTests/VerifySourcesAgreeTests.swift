import Foundation
import XCTest
import ModelCastTestSupport
@testable import ModelCastCore

/// Issue 26, item 1 (first step): `verify s3://` passed a zip that `verify https://…` and
/// `verify DIR` refuse. The zip-safety check now runs for all three sources, one check
/// with one wording, reading the archive's records with ranged reads of the store.
final class VerifySourcesAgreeTests: XCTestCase {
    func testTheSameHostileZipFailsTheSameWayThroughEverySource() throws {
        let moto = try MotoS3()
        let work = try Scratch()
        let zip = work.at("model.zip")
        // weights.bin is stored (method 0); its local header is patched to say deflate (8).
        try shell(#"python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1], "w"); z.writestr("Model/config.json", "{}"); z.writestr("Model/weights.bin", bytes(range(256)) * 4); z.close()' '\#(zip)'"#)
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: zip)))
        let header = 30 + "Model/config.json".utf8.count + 2
        XCTAssertEqual(bytes[header + 8], 0)
        bytes[header + 8] = 8
        try Data(bytes).write(to: URL(fileURLWithPath: zip))
        let expected = #"m 1.0.0/model.zip: entry "Model/weights.bin": local header at offset \#(header) says compression method 8, the central directory says 0"#

        func zipFailures(_ arguments: [String], environment: [String: String]? = nil) throws -> [String] {
            let (result, report) = try verifyJSON(arguments, environment: environment)
            XCTAssertEqual(result.status, 1, "\(arguments): \(result.stdout)\(result.stderr)")
            return checks(report, "artifact.zip", .fail).map(\.detail)
        }
        // A directory.
        let publishArguments = ["publish", zip, "--name", "m", "--version", "1.0.0"]
        XCTAssertEqual(try modelcast(publishArguments + ["--base-url", "https://cdn.example.com/ml", "--to", work.at("site")]).status, 0)
        XCTAssertEqual(try zipFailures([work.at("site")]), [expected])
        // A URL (serve).
        let port = try freeLoopbackPort()
        let served = "http://127.0.0.1:\(port)/ml"
        XCTAssertEqual(try modelcast(publishArguments + ["--base-url", served, "--to", work.at("served")]).status, 0)
        let server = try BackgroundProcess(modelcastBinary, ["serve", work.at("served"), "--port", String(port)])
        XCTAssertEqual(server.firstLine, served)
        XCTAssertEqual(try zipFailures([served + "/manifest.json", "--allow-http"]), [expected])
        // A bucket, through the S3 API.
        let published = try modelcast(publishArguments + ["--base-url", "https://cdn.example.com/ml", "--to", "s3://models/ml"], environment: moto.environment)
        XCTAssertEqual(published.status, 0, published.stderr)
        XCTAssertEqual(try zipFailures(["s3://models/ml"], environment: moto.environment), [expected])
        // The entry cap applies to the bucket too.
        let capped = try modelcast(["verify", "s3://models/ml", "--max-zip-entries", "1", "--json"], environment: moto.environment)
        XCTAssertTrue(capped.stdout.contains("--max-zip-entries"), capped.stdout)
        withExtendedLifetime(server) {}
    }
}

extension VerifySourcesAgreeTests {
    /// Issue 26, item 1: one Verifier reads a URL, a directory and a bucket through three
    /// adapters. The same tampered object (other bytes of the same size, headers intact)
    /// fails the same checks, worded the same, through all three; everything else passes.
    func testTheSameTamperedObjectFailsTheSameWayThroughEverySource() throws {
        let moto = try MotoS3()
        let work = try Scratch()
        let model = work.at("tiny.gguf")
        try FileManager.default.copyItem(atPath: repositoryRoot + "/examples/models/tiny-llm.gguf", toPath: model)
        var tampered = Array(try Data(contentsOf: URL(fileURLWithPath: model)))
        tampered[tampered.count - 1] ^= 0xFF  // past the first 100 bytes a Range check compares
        try Data(tampered).write(to: URL(fileURLWithPath: work.at("tampered.gguf")))
        let tamperedSHA = try SHA256Hasher.digest(Data(tampered)).hex
        let key = "models/m/1.0.0/tiny.gguf"
        let publishArguments = ["publish", model, "--name", "m", "--version", "1.0.0"]

        /// The failed and warned checks of one verify, as (check, status, detail) with the
        /// detail's source-specific part (where the object was read) left out by the report.
        func problems(_ arguments: [String], environment: [String: String]? = nil) throws -> [String] {
            let (result, report) = try verifyJSON(arguments, environment: environment)
            XCTAssertEqual(result.status, 1, "\(arguments): \(result.stdout)\(result.stderr)")
            // Failures and warnings; a check a source cannot make (skip) is not a problem found.
            return (report?.checks ?? []).filter { $0.status == .fail || $0.status == .warn }.map { "\($0.check) \($0.status) \($0.detail)" }
        }
        // A directory: the file rewritten in place.
        XCTAssertEqual(try modelcast(publishArguments + ["--base-url", "https://cdn.example.com/ml", "--to", work.at("site")]).status, 0)
        try FileManager.default.removeItem(atPath: work.at("site/" + key))
        try Data(tampered).write(to: URL(fileURLWithPath: work.at("site/" + key)))
        let directory = try problems([work.at("site")])
        // A URL (serve), over the same kind of tampered file.
        let port = try freeLoopbackPort()
        let served = "http://127.0.0.1:\(port)/ml"
        XCTAssertEqual(try modelcast(publishArguments + ["--base-url", served, "--to", work.at("served")]).status, 0)
        try FileManager.default.removeItem(atPath: work.at("served/" + key))
        try Data(tampered).write(to: URL(fileURLWithPath: work.at("served/" + key)))
        let server = try BackgroundProcess(modelcastBinary, ["serve", work.at("served"), "--port", String(port)])
        XCTAssertEqual(server.firstLine, served)
        let url = try problems([served + "/manifest.json", "--allow-http"])
        // A bucket: the object overwritten by another client, with the metadata claiming the old digest.
        XCTAssertEqual(try modelcast(publishArguments + ["--base-url", "https://cdn.example.com/ml", "--to", "s3://models/ml"], environment: moto.environment).status, 0)
        let original = try SHA256Hasher.digest(Data(contentsOf: URL(fileURLWithPath: model))).hex
        try moto.awsCLI(["s3api", "put-object", "--bucket", moto.bucket, "--key", "ml/" + key, "--body", work.at("tampered.gguf"),
                         "--metadata", "sha256=\(original)", "--cache-control", CachePolicy.immutable, "--content-type", "application/octet-stream"])
        let bucket = try problems(["s3://models/ml"], environment: moto.environment)

        let expected = ["artifact.sha256 fail m 1.0.0/tiny.gguf: got \(tamperedSHA), manifest says \(original)"]
        XCTAssertEqual(directory, expected)
        XCTAssertEqual(url, expected)
        XCTAssertEqual(bucket, expected)
        withExtendedLifetime(server) {}
    }
}
