import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// Failures on the commit path against a real S3 API (moto behind the fault proxy):
/// a run deletes only what it saw itself create, and restores nothing that could
/// contradict what is live.
final class CommitFailureTests: XCTestCase {
    /// moto, the fault proxy in front of it, a signing key and one signed release (1.0.0).
    struct Setup {
        let moto: MotoS3
        let proxy: BackgroundProcess
        let rules: String
        let endpoint: String
        let scratch: Scratch
        let publicKey: String
        let secretKey: String
        let target: String
        let base = "https://cdn.example.com/c"

        func publish(_ version: String, _ file: String) throws -> ProcessOutput {
            var environment = pinnedEnvironment(moto.environment, epoch: Int(Date().timeIntervalSince1970))
            environment["AWS_ENDPOINT_URL"] = endpoint
            // Versions swap one example model for another: an intended interface change.
            return try PublishRun([file], version: version, baseURL: base, to: target, ["--sign", secretKey, "--interface-change", "--min-app-version", version],
                                  environment: environment).run()
        }

        func setRules(_ json: String) throws {
            try json.write(toFile: rules, atomically: true, encoding: .utf8)
        }
    }

    func makeSetup(file: StaticString = #filePath, line: UInt = #line) throws -> Setup {
        let moto = try MotoS3()
        let scratch = try Scratch()
        let rules = scratch.at("rules.json")
        try "[]".write(toFile: rules, atomically: true, encoding: .utf8)
        let proxyPort = try freeLoopbackPort()
        let proxy = try BackgroundProcess("/usr/bin/env", ["python3", repositoryRoot + "/Tests/Fixtures/fault_proxy.py", String(proxyPort), String(moto.port), rules])
        XCTAssertEqual(proxy.firstLine, "ready", file: file, line: line)
        let keygen = try modelcast(["keygen", "--unencrypted", "--public-key", scratch.at("k.pub"), "--secret-key", scratch.at("k.key")])
        XCTAssertEqual(keygen.status, 0, keygen.stderr, file: file, line: line)
        let setup = Setup(moto: moto, proxy: proxy, rules: rules, endpoint: "http://127.0.0.1:\(proxyPort)", scratch: scratch,
                          publicKey: scratch.at("k.pub"), secretKey: scratch.at("k.key"), target: "s3://\(moto.bucket)/c")
        let first = try setup.publish("1.0.0", repositoryRoot + "/examples/models/tiny-llm.gguf")
        XCTAssertEqual(first.status, 0, first.stderr, file: file, line: line)
        return setup
    }

    /// The live manifest and its detached signature agree (the stock minisign says so).
    func assertManifestMatchesSignature(_ setup: Setup, file: StaticString = #filePath, line: UInt = #line) throws {
        let manifest = setup.scratch.at("live.json")
        try setup.moto.download("c/manifest.json").write(to: URL(fileURLWithPath: manifest))
        try setup.moto.download("c/manifest.json.minisig").write(to: URL(fileURLWithPath: manifest + ".minisig"))
        let check = try runProcess("/usr/bin/env", ["minisign", "-Vm", manifest, "-p", setup.publicKey])
        XCTAssertEqual(check.status, 0, "the live manifest and signature disagree: \(check.stderr)", file: file, line: line)
    }

    /// Issue 10, case 8: the history PUT's answer is lost, so its retry finds the record
    /// already there (`unchanged`); the run then fails before the manifest. It did not see
    /// itself create that record, so it must not delete it (an identical concurrent
    /// publish may have written it).
    func testARecordFoundAlreadyThereIsNeverDeleted() throws {
        let setup = try makeSetup()
        try setup.setRules(#"""
            [{"method": "PUT", "contains": "/c/manifests/", "action": "lose-response", "times": 1},
             {"method": "PUT", "contains": "manifest.json.minisig", "action": "503", "times": 99}]
            """#)
        let failed = try setup.publish("1.1.0", repositoryRoot + "/examples/models/tiny-llm-mmproj.gguf")
        try setup.setRules("[]")
        XCTAssertNotEqual(failed.status, 0, failed.stdout)
        // Undoing tries to put the old signature back through the same failing store: a
        // failed undo step is reported, never swallowed.
        XCTAssertTrue(failed.stderr.contains("could not restore manifest.json.minisig"), failed.stderr)
        let keys = try setup.moto.listing().keys.sorted()
        XCTAssertTrue(keys.contains("c/manifests/00000002.json"), "a record this run did not see itself create was deleted: \(keys)")
        let live = try Release.decode(try setup.moto.download("c/manifest.json"), source: "live")
        XCTAssertEqual(live.models["m"]?.version, "1.0.0")
        try assertManifestMatchesSignature(setup)
        // The next publish goes on above the orphan record.
        let next = try setup.publish("1.1.0", repositoryRoot + "/examples/models/tiny-llm-mmproj.gguf")
        XCTAssertEqual(next.status, 0, next.stderr)
        XCTAssertEqual(try Release.decode(try setup.moto.download("c/manifest.json"), source: "live").sequence, 3)
        try assertManifestMatchesSignature(setup)
    }

    /// Issue 10, case 9: the manifest PUT lands but its answer is lost, and what is live
    /// cannot be read back. The old signature must not be put back beside the new manifest.
    func testAnUnconfirmedManifestWriteRestoresNothing() throws {
        let setup = try makeSetup()
        // "/c/manifest.json" also matches the signature: its PUT comes first (skipped). The load
        // reads manifest.json and manifest.json.minisig (2 GETs); the read-back after the failed write is the third.
        try setup.setRules(#"""
            [{"method": "PUT", "contains": "/c/manifest.json", "skip": 1, "action": "lose-response", "times": 1},
             {"method": "GET", "contains": "/c/manifest.json", "skip": 2, "action": "503", "times": 99}]
            """#)
        let result = try setup.publish("1.1.0", repositoryRoot + "/examples/models/tiny-llm-mmproj.gguf")
        try setup.setRules("[]")
        let log = (try? String(contentsOfFile: setup.rules + ".log", encoding: .utf8)) ?? ""
        XCTAssertTrue(log.contains("/c/manifest.json -> lose-response"), log)
        XCTAssertNotEqual(result.status, 0, result.stdout)
        XCTAssertTrue(result.stderr.contains("did not confirm the manifest write"), result.stderr)
        XCTAssertTrue(result.stderr.contains("nothing was restored"), result.stderr)
        let live = try Release.decode(try setup.moto.download("c/manifest.json"), source: "live")
        XCTAssertEqual(live.models["m"]?.version, "1.1.0", "the lost-answer PUT did land")
        try assertManifestMatchesSignature(setup)
    }
}
