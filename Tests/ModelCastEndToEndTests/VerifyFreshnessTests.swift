import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// An older manifest served after a newer one went live (issue #11 item 7), from a
/// published directory, an S3 target, or a CDN compared with its origin; and legacy
/// minisign signatures (item 8).
final class VerifyFreshnessTests: XCTestCase {
    var environment: [String: String] {
        let environment = pinnedEnvironment()
        return environment
    }

    static let releases = [
        (["examples/models/TinyClassifier.mlpackage"], "1.0.0"),
        (["examples/models/tiny-llm.gguf"], "1.1.0"),
        (["examples/models/tiny-llm.gguf", "examples/models/tiny-llm-mmproj.gguf"], "1.2.0"),
    ]

    /// Publishes release `index` of `releases` (sequence index + 1) to `target`.
    func publish(_ index: Int, base: String, to target: String, environment: [String: String]? = nil, extra: [String] = []) throws {
        let (models, version) = Self.releases[index]
        // Releases swap one example model for another: an intended interface change.
        try PublishRun(models, version: version, baseURL: base, to: target, extra + ["--interface-change", "--min-app-version", version],
                       environment: environment ?? self.environment).succeeds()
    }

    // MARK: - verify DIR

    func testVerifyDirectoryFailsALiveManifestOlderThanOneThatWentLive() throws {
        let work = try Scratch()
        let site = work.at("site")
        let base = "https://cdn.example.com/ml"
        try publish(0, base: base, to: site)
        let first = try Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json"))
        try publish(1, base: base, to: site)
        let second = try Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json"))
        try publish(2, base: base, to: site)

        let (fresh, freshReport) = try verifyJSON([site])
        XCTAssertEqual(fresh.status, 0, fresh.stdout)
        XCTAssertTrue(checks(freshReport, "manifest.freshness", .pass).contains { $0.detail.hasPrefix("sequence 3") }, fresh.stdout)

        // Sequence 1 put back after 2 went live (record 3 says it replaced 2): it fails, naming both.
        try first.write(to: URL(fileURLWithPath: site + "/manifest.json"))
        let (stale, staleReport) = try verifyJSON([site])
        XCTAssertEqual(stale.status, 1, stale.stdout)
        let failure = try XCTUnwrap(checks(staleReport, "manifest.freshness", .fail).first, stale.stdout)
        XCTAssertTrue(failure.detail.contains("the live manifest is sequence 1, older than sequence 2, which went live (history record 3 replaced it)"), failure.detail)

        // Sequence 2 with a record 3 beside it is not proof of anything: record 3's publish may
        // have died before its manifest write (nothing says 3 went live).
        try second.write(to: URL(fileURLWithPath: site + "/manifest.json"))
        let (pending, pendingReport) = try verifyJSON([site])
        XCTAssertEqual(pending.status, 0, pending.stdout)
        XCTAssertEqual(checks(pendingReport, "manifest.freshness", .pass).count, 1, pending.stdout)
    }

    // MARK: - verify URL --origin DIR

    func testOriginDirectoryComparedWithWhatTheCDNServes() throws {
        let work = try Scratch()
        let port = try freeLoopbackPort()
        let base = "http://127.0.0.1:\(port)/ml"
        let origin = work.at("origin")
        try publish(0, base: base, to: origin)
        try publish(1, base: base, to: origin)
        // The "CDN" serves a copy of the origin taken now.
        try FileManager.default.copyItem(atPath: origin, toPath: work.at("cdn"))
        let server = try BackgroundProcess(modelcastBinary, ["serve", work.at("cdn"), "--port", String(port)])
        XCTAssertEqual(server.firstLine, base)
        let url = base + "/manifest.json"

        let (same, sameReport) = try verifyJSON([url, "--allow-http", "--origin", origin])
        XCTAssertEqual(same.status, 0, same.stdout)
        XCTAssertTrue(checks(sameReport, "manifest.origin", .pass).contains { $0.detail == "the same bytes as the origin \(origin)/manifest.json (sequence 2)" }, same.stdout)

        // The origin moves on; the CDN still serves sequence 2.
        try publish(2, base: base, to: origin)
        let (stale, staleReport) = try verifyJSON([url, "--allow-http", "--origin", origin])
        XCTAssertEqual(stale.status, 1, stale.stdout)
        let failure = try XCTUnwrap(checks(staleReport, "manifest.origin", .fail).first, stale.stdout)
        XCTAssertTrue(failure.detail.hasPrefix("the CDN serves sequence 2, the origin \(origin)/manifest.json has 3: the CDN serves an older manifest"), failure.detail)

        // --origin is for a manifest URL only.
        let refused = try modelcast(["verify", origin, "--origin", origin])
        XCTAssertEqual(refused.status, 2, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("--origin applies to a manifest URL"), refused.stderr)
    }

    // MARK: - verify s3:// and --origin s3://

    func testS3TargetAndOriginFailAnOlderLiveManifest() throws {
        let moto = try MotoS3(checkSignatures: false)
        try moto.allowPublicReads()
        let environment = pinnedEnvironment(moto.environment)
        let target = "s3://\(moto.bucket)/ml"
        let base = "\(moto.endpoint)/\(moto.bucket)/ml"
        for index in 0..<3 { try publish(index, base: base, to: target, environment: environment) }
        let (fresh, freshReport) = try verifyJSON([target, "--allow-http"], environment: moto.environment)
        XCTAssertEqual(fresh.status, 0, fresh.stdout)
        XCTAssertEqual(checks(freshReport, "manifest.freshness", .pass).count, 1, fresh.stdout)
        // Through the public URL, compared with the bucket: the same bytes.
        let url = base + "/manifest.json"
        let (same, sameReport) = try verifyJSON([url, "--allow-http", "--origin", target], environment: moto.environment)
        XCTAssertEqual(same.status, 0, same.stdout)
        XCTAssertTrue(checks(sameReport, "manifest.origin", .pass).contains { $0.detail.contains("(sequence 3)") }, same.stdout)

        // Record 1's rendering put back as the live manifest (with its headers), after 3 went live.
        let old = try moto.download("ml/manifests/00000001.json")
        let oldPath = NSTemporaryDirectory() + "/modelcast-old-\(UUID().uuidString).json"
        try old.write(to: URL(fileURLWithPath: oldPath))
        defer { try? FileManager.default.removeItem(atPath: oldPath) }
        try moto.awsCLI(["s3api", "put-object", "--bucket", moto.bucket, "--key", "ml/manifest.json", "--body", oldPath,
                         "--cache-control", "no-cache, no-store", "--content-type", "application/json"])
        let (stale, staleReport) = try verifyJSON([target, "--allow-http"], environment: moto.environment)
        XCTAssertEqual(stale.status, 1, stale.stdout)
        XCTAssertTrue(checks(staleReport, "manifest.freshness", .fail).contains { $0.detail.contains("the live manifest is sequence 1, older than sequence 2, which went live") }, stale.stdout)

        // A "CDN" still serving sequence 2 (a directory with the same two releases, same base URL)
        // against the bucket as origin, live manifest restored to 3.
        let work = try Scratch()
        try publish(0, base: base, to: work.at("cdn"))
        try publish(1, base: base, to: work.at("cdn"))
        try moto.awsCLI(["s3api", "put-object", "--bucket", moto.bucket, "--key", "ml/manifest.json", "--body", try work.write("live.json", [UInt8](try moto.download("ml/manifests/00000003.json"))),
                         "--cache-control", "no-cache, no-store", "--content-type", "application/json"])
        let port = try freeLoopbackPort()
        let server = try BackgroundProcess(modelcastBinary, ["serve", work.at("cdn"), "--port", String(port)])
        XCTAssertTrue(server.firstLine.hasPrefix("http://127.0.0.1:\(port)"), server.firstLine)
        let cdnURL = "http://127.0.0.1:\(port)/\(moto.bucket)/ml/manifest.json"
        // (Its objects are named under the bucket's URL: --base-url says so.)
        let (behind, behindReport) = try verifyJSON([cdnURL, "--allow-http", "--base-url", base, "--origin", target], environment: moto.environment)
        XCTAssertEqual(behind.status, 1, behind.stdout)
        XCTAssertTrue(checks(behindReport, "manifest.origin", .fail).contains { $0.detail.hasPrefix("the CDN serves sequence 2, the origin \(target)/manifest.json has 3") }, behind.stdout)
    }

    // MARK: - Item 8: legacy signatures

    func testALegacySignatureIsAcceptedOnlyWithTheFlag() throws {
        let work = try Scratch()
        let keys = try modelcast(["keygen", "--unencrypted", "--public-key", work.at("k.pub"), "--secret-key", work.at("k.key")])
        XCTAssertEqual(keys.status, 0, keys.stderr)
        let site = work.at("site")
        try publish(0, base: "https://cdn.example.com/ml", to: site, extra: ["--sign", work.at("k.key")])
        let (signed, _) = try verifyJSON([site, "--public-key", work.at("k.pub")])
        XCTAssertEqual(signed.status, 0, signed.stdout)

        // The same manifest and trusted comment, signed by the real minisign in its legacy mode.
        let prehashed = try String(contentsOfFile: site + "/manifest.json.minisig", encoding: .utf8)
        let comment = try XCTUnwrap(prehashed.split(separator: "\n").first { $0.hasPrefix("trusted comment: ") }).dropFirst("trusted comment: ".count)
        let minisign = try runProcess("/usr/bin/env", ["minisign", "-S", "-l", "-s", work.at("k.key"), "-m", site + "/manifest.json", "-x", site + "/manifest.json.minisig", "-t", String(comment)])
        XCTAssertEqual(minisign.status, 0, minisign.stderr)
        let legacy = try String(contentsOfFile: site + "/manifest.json.minisig", encoding: .utf8)
        XCTAssertTrue(legacy.split(separator: "\n")[1].hasPrefix("RW"), "base64 of 'Ed' (legacy), not 'ED' ('RU…'): \(legacy)")

        let (refused, refusedReport) = try verifyJSON([site, "--public-key", work.at("k.pub")])
        XCTAssertEqual(refused.status, 1, refused.stdout)
        XCTAssertTrue(checks(refusedReport, "manifest.signature", .fail).contains { $0.detail.contains("a legacy minisign signature") && $0.detail.contains("--allow-legacy-signature") }, refused.stdout)
        XCTAssertTrue(checks(refusedReport, "manifest.trust", .fail).count == 1, "nothing is fetched after a refused signature: \(refused.stdout)")

        let (accepted, acceptedReport) = try verifyJSON([site, "--public-key", work.at("k.pub"), "--allow-legacy-signature"])
        XCTAssertEqual(accepted.status, 0, accepted.stdout)
        XCTAssertTrue(checks(acceptedReport, "manifest.signature", .pass).contains { $0.detail.contains("legacy 'Ed' signature, accepted by --allow-legacy-signature") }, accepted.stdout)
        // A tampered manifest still fails with the flag: it accepts the format, not a bad signature.
        let manifest = try String(contentsOfFile: site + "/manifest.json", encoding: .utf8)
        try manifest.replacingOccurrences(of: "\"stable\"", with: "\"stab1e\"").write(toFile: site + "/manifest.json", atomically: true, encoding: .utf8)
        let (tampered, _) = try verifyJSON([site, "--public-key", work.at("k.pub"), "--allow-legacy-signature"])
        XCTAssertEqual(tampered.status, 1, tampered.stdout)

        let help = try modelcast(["verify", "--help"])
        XCTAssertTrue(help.stdout.contains("--allow-legacy-signature"), help.stdout)
    }
}
