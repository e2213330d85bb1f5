import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// `modelcast verify` against modelcast's own `serve`, a published directory, and a
/// deliberately misbehaving server; `modelcast serve` as a client sees it.
final class VerifyServeCLITests: XCTestCase {
    var environment: [String: String] {
        let environment = pinnedEnvironment()
        return environment
    }

    /// Publishes two releases (a zipped package, then a GGUF) to `site` under `base`.
    func publishTwoReleases(to site: String, base: String) throws {
        // The parent exists, as publish requires (a missing one is likely a mistyped target).
        try FileManager.default.createDirectory(atPath: URL(fileURLWithPath: site).deletingLastPathComponent().path, withIntermediateDirectories: true)
        for (model, version) in [("examples/models/TinyClassifier.mlpackage", "1.0.0"), ("examples/models/tiny-llm.gguf", "1.1.0")] {
            // The GGUF replaces the Core ML package: an intended interface change.
            let result = try modelcast(["publish", model, "--name", "m", "--version", version, "--base-url", base, "--to", site,
                                        "--interface-change", "--min-app-version", version], environment: environment)
            XCTAssertEqual(result.status, 0, result.stderr)
        }
    }

    func statuses(_ report: VerifyReport?, _ check: String) -> [VerifyCheck.Status] {
        report?.checks.filter { $0.check == check }.map(\.status) ?? []
    }

    // MARK: - Through modelcast serve

    /// Issue 44 item 7a: `publish --verify-url` through `modelcast serve` of the directory
    /// published to. serve answers only what `_modelcast/objects.json` lists, which names a
    /// release's objects once it is live; publish lists the staged objects for it while it
    /// verifies, and only for that long.
    func testPublishVerifiesItsStagedReleaseThroughServe() throws {
        let work = try Scratch()
        let port = try freeLoopbackPort()
        let base = "http://127.0.0.1:\(port)/ml"
        let site = work.at("site")
        let v1 = try work.write("v1/m.bin", patternBytes(2000, seed: 1))
        let v2 = try work.write("v2/m.bin", patternBytes(2000, seed: 2))
        XCTAssertEqual(try PublishRun([v1], version: "1.0.0", baseURL: base, to: site, environment: environment).run().status, 0)
        let server = try BackgroundProcess(modelcastBinary, ["serve", site, "--port", String(port)])
        XCTAssertEqual(server.firstLine, base)
        let published = try PublishRun([v2], version: "1.1.0", baseURL: base, to: site, ["--verify-url", base], environment: environment).run()
        XCTAssertEqual(published.status, 0, published.stderr)
        XCTAssertTrue(published.stderr.contains("verified the staged release through \(base)"), published.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: site + "/_modelcast/staged-objects.json"), "withdrawn once the check ended")
        let live = try Release.decode(Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json")), source: "manifest")
        XCTAssertEqual(live.models["m"]?.version, "1.1.0")

        // A list no running publish wrote (a killed run's) is never served: an object only it
        // names answers 404, until a command holds the directory's lock.
        let stray = "models/m/9.9.9/m.bin"
        _ = try work.write("site/" + stray, patternBytes(100, seed: 3))
        _ = try work.write("site/_modelcast/staged-objects.json", text: #"{"objects":[{"cache_control":"public, max-age=31536000, immutable","content_type":"application/octet-stream","key":"\#(stray)"}]}"#)
        let unlocked = try runProcess("/usr/bin/env", ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", base + "/" + stray])
        XCTAssertEqual(unlocked.stdout, "404")
        let lock = open(site, O_RDONLY | O_DIRECTORY)
        XCTAssertEqual(flock(lock, LOCK_EX), 0)
        let locked = try runProcess("/usr/bin/env", ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", base + "/" + stray])
        flock(lock, LOCK_UN)
        close(lock)
        XCTAssertEqual(locked.stdout, "200", "listed while a command holds the lock")
        withExtendedLifetime(server) {}
    }

    func testPublishServeVerifyRoundTrip() throws {
        let work = try Scratch()
        let port = try freeLoopbackPort()
        let base = "http://127.0.0.1:\(port)/ml"
        try publishTwoReleases(to: work.at("site"), base: base)
        let server = try BackgroundProcess(modelcastBinary, ["serve", work.at("site"), "--port", String(port)])
        XCTAssertEqual(server.firstLine, base)

        let (result, report) = try verifyJSON([base + "/manifest.json", "--allow-http", "--state", work.at("state.json")])
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        let report1 = try XCTUnwrap(report)
        XCTAssertTrue(report1.passed)
        XCTAssertEqual(report1.profile, "modelcast")
        XCTAssertEqual(report1.sequence, 2)
        // The current file and the rollback target: hash, size, headers, range; the zip walked.
        XCTAssertEqual(statuses(report, "artifact.sha256"), [.pass, .pass])
        XCTAssertEqual(statuses(report, "artifact.range"), [.pass, .pass])
        XCTAssertEqual(statuses(report, "artifact.zip"), [.pass])
        XCTAssertEqual(statuses(report, "manifest.sequence"), [.pass])
        XCTAssertTrue(try String(contentsOfFile: work.at("state.json"), encoding: .utf8).contains("\"sequence\" : 2"))

        // An older manifest (sequence 1) served after sequence 2 was seen: a replay.
        try FileManager.default.createDirectory(atPath: work.at("old"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: work.at("site/manifests/00000001.json"), toPath: work.at("old/manifest.json"))
        let (old, oldReport) = try verifyJSON([work.at("old/manifest.json"), "--base-url", base, "--allow-http", "--state", work.at("state.json")])
        XCTAssertEqual(old.status, 1)
        XCTAssertTrue(oldReport?.checks.contains { $0.check == "manifest.sequence" && $0.status == .fail && $0.detail.contains("sequence 1 is lower than 2") } ?? false, old.stdout)

        // Without --allow-http, a plain-http manifest URL is refused up front.
        let refused = try modelcast(["verify", base + "/manifest.json"])
        XCTAssertEqual(refused.status, 2)
        XCTAssertTrue(refused.stderr.contains("\(base)/manifest.json is plain http"), refused.stderr)
        XCTAssertTrue(server.standardError.contains("GET /ml/manifest.json 200"), "serve logs requests: \(server.standardError)")
    }

    func testServeAnswersLikeACDN() throws {
        let work = try Scratch()
        let port = try freeLoopbackPort()
        let base = "http://127.0.0.1:\(port)/ml"
        try publishTwoReleases(to: work.at("site"), base: base)
        let server = try BackgroundProcess(modelcastBinary, ["serve", work.at("site"), "--port", String(port)])
        XCTAssertEqual(server.firstLine, base)
        func curl(_ arguments: [String]) throws -> String {
            try shell("curl -sS -o /dev/null -D - " + arguments.map { "'\($0)'" }.joined(separator: " "))
        }
        let head = try curl(["-I", base + "/models/m/1.0.0/TinyClassifier.mlpackage.zip"])
        XCTAssertTrue(head.contains("HTTP/1.1 200"), head)
        XCTAssertTrue(head.contains("Content-Type: application/zip"), head)
        XCTAssertTrue(head.contains("Cache-Control: public, max-age=31536000, immutable"), head)
        XCTAssertTrue(head.contains("Content-Length: 19019"), head)
        XCTAssertTrue(head.contains("Accept-Ranges: bytes"), head)
        let etag = try XCTUnwrap(head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("etag:") }?.dropFirst(5).trimmingCharacters(in: .whitespaces))
        let notModified = try curl(["-H", "If-None-Match: \(etag)", base + "/models/m/1.0.0/TinyClassifier.mlpackage.zip"])
        XCTAssertTrue(notModified.contains("HTTP/1.1 304"), notModified)
        let range = try curl(["-H", "Range: bytes=10-19", base + "/models/m/1.1.0/tiny-llm.gguf"])
        XCTAssertTrue(range.contains("HTTP/1.1 206"), range)
        XCTAssertTrue(range.contains("Content-Range: bytes 10-19/1024"), range)
        let manifest = try curl([base + "/manifest.json"])
        XCTAssertTrue(manifest.contains("Cache-Control: no-cache, no-store"), manifest)
        XCTAssertTrue(manifest.contains("Content-Type: application/json"), manifest)
        // Only published objects are served.
        for hidden in ["/_modelcast/objects.json", "/_headers", "/.modelcast-staging/x", "/models/", "/../etc/passwd", "/nothing"] {
            XCTAssertTrue(try curl([base + hidden]).contains("HTTP/1.1 404"), hidden)
        }
        XCTAssertTrue(try curl(["http://127.0.0.1:\(port)/manifest.json"]).contains("HTTP/1.1 404"), "outside the base path")
    }

    // MARK: - A published directory, before it is synced

    func testVerifyDirectoryCatchesATamperedArtifact() throws {
        let work = try Scratch()
        let base = "https://cdn.example.com/ml"
        try publishTwoReleases(to: work.at("site"), base: base)
        let (clean, cleanReport) = try verifyJSON([work.at("site")])
        XCTAssertEqual(clean.status, 0, clean.stdout)
        XCTAssertEqual(cleanReport?.checks.filter { $0.status == .fail }.count, 0)

        let file = work.at("site/models/m/1.1.0/tiny-llm.gguf")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: file))
        bytes[500] ^= 0xff
        try bytes.write(to: URL(fileURLWithPath: file))
        let (tampered, report) = try verifyJSON([work.at("site")])
        XCTAssertEqual(tampered.status, 1)
        let failure = try XCTUnwrap(report?.checks.first { $0.check == "artifact.sha256" && $0.status == .fail })
        XCTAssertEqual(failure.subject, work.at("site") + "/models/m/1.1.0/tiny-llm.gguf", "the file read (issue 25, item 11)")
        XCTAssertTrue(failure.detail.contains("manifest says b67f7c0f2554d969e9bd3d1e3efbb2faa71537a42d6e3c4ec85de5f65b82bb71"), failure.detail)
        // The text table names it too, and the exit status fails the pipeline.
        let text = try modelcast(["verify", work.at("site")])
        XCTAssertEqual(text.status, 1)
        XCTAssertTrue(text.stdout.contains("FAIL  artifact.sha256"), text.stdout)
        XCTAssertTrue(text.stdout.contains("FAILED: "), text.stdout)
    }

    func testVerifyReadsEveryProfile() throws {
        let work = try Scratch()
        let cases: [(String, [String])] = [
            ("nomlens", ["examples/models/tiny-llm.gguf", "--profile", "nomlens", "--meta", "num_classes=3", "--meta", "class_list_version=v1", "--meta", "training_date=2026-03-27"]),
            ("tiers", ["1b=examples/models/tiny-llm.gguf", "--profile", "tiers", "--meta", "release_notes=x", "--min-app-version", "1.0.0"]),
            ("catalog", ["--config", "examples/catalog/modelcast.yml"]),
            ("latest", ["examples/models/tiny-llm.gguf", "--profile", "latest"]),
        ]
        for (profile, arguments) in cases {
            let site = work.at(profile)
            for version in ["1.0.0", "1.1.0"] {
                let versionArguments = profile == "catalog" ? (version == "1.0.0" ? [] : ["--meta", "tiny-llm:minAppVersion=2.2.0"]) : ["--version", version]
                let result = try modelcast(["publish"] + arguments + versionArguments + ["--base-url", "https://cdn.example.com", "--to", site], environment: environment)
                XCTAssertEqual(result.status, 0, "\(profile): \(result.stderr)")
            }
            let (result, report) = try verifyJSON([site])
            XCTAssertEqual(report?.profile, profile)
            XCTAssertEqual(result.status, 0, "\(profile): \(result.stdout)")
            XCTAssertGreaterThan(statuses(report, "artifact.sha256").count, 0, profile)
        }
        // tiers' rollback URLs carry no hash: fetched and checked, with a warning.
        let (_, tiers) = try verifyJSON([work.at("tiers")])
        XCTAssertTrue(tiers?.checks.contains { $0.check == "artifact.sha256" && $0.status == .warn && $0.detail.contains("rollback tier 1b") } ?? false)
        let (strict, _) = try verifyJSON([work.at("tiers"), "--strict"])
        XCTAssertEqual(strict.status, 1, "warnings fail with --strict")
        // latest: the file name is checked against the content.
        let (_, latest) = try verifyJSON([work.at("latest")])
        XCTAssertTrue(latest?.checks.contains { $0.check == "artifact.sha256" && $0.status == .pass && $0.detail.contains("file name matches its content") } ?? false)
    }

    /// Manifest-level failures. Every object URL is on loopback (served by
    /// `modelcast serve`); verify never fetches a URL that fails its URL checks.
    func testManifestLevelFailures() throws {
        let work = try Scratch()
        let port = try freeLoopbackPort()
        let base = "http://127.0.0.1:\(port)/ml"
        try publishTwoReleases(to: work.at("site"), base: base)
        let server = try BackgroundProcess(modelcastBinary, ["serve", work.at("site"), "--port", String(port)])
        XCTAssertEqual(server.firstLine, base)
        let live = try String(contentsOfFile: work.at("site/manifest.json"), encoding: .utf8)
        func manifest(_ name: String, _ text: String) throws -> String {
            try FileManager.default.createDirectory(atPath: work.at(name), withIntermediateDirectories: true)
            return try work.write(name + "/manifest.json", text: text)
        }

        // Expired, and expiring soon.
        let expired = try manifest("expired", live.replacingOccurrences(of: "\"channel\"", with: "\"expires_at\": \"2020-01-01T00:00:00Z\",\n  \"channel\""))
        let (expiredResult, expiredReport) = try verifyJSON([expired, "--base-url", base, "--allow-http"])
        XCTAssertEqual(expiredResult.status, 1)
        XCTAssertTrue(expiredReport?.checks.contains { $0.check == "manifest.expiry" && $0.status == .fail && $0.detail.hasPrefix("expired at 2020-01-01T00:00:00Z: ") } ?? false, expiredResult.stdout)
        let soon = formatTimestamp(Date().addingTimeInterval(3600))
        let expiring = try manifest("soon", live.replacingOccurrences(of: "\"channel\"", with: "\"expires_at\": \"\(soon)\",\n  \"channel\""))
        let (soonResult, soonReport) = try verifyJSON([expiring, "--base-url", base, "--allow-http"])
        XCTAssertTrue(soonReport?.checks.contains { $0.check == "manifest.expiry" && $0.status == .warn } ?? false, soonResult.stdout)

        // A URL outside the expected prefix is reported and not fetched.
        let evil = "http://127.0.0.2:\(port)/evil/tiny-llm.gguf"
        let outside = try manifest("outside", live.replacingOccurrences(of: base + "/models/m/1.1.0/tiny-llm.gguf", with: evil))
        let (outsideResult, outsideReport) = try verifyJSON([outside, "--base-url", base, "--allow-http"])
        XCTAssertEqual(outsideResult.status, 1)
        XCTAssertTrue(outsideReport?.checks.contains { $0.check == "manifest.urls" && $0.status == .fail && $0.subject == evil && $0.detail.contains("outside the expected prefix") } ?? false, outsideResult.stdout)
        XCTAssertFalse(outsideReport?.checks.contains { $0.check.hasPrefix("artifact.") && $0.subject == evil } ?? true, "an outside URL must not be fetched")

        // A URL that starts with the prefix but climbs out of it ('..', also percent-encoded) is refused and not fetched.
        let climbing = base + "/models/m/1.1.0/../../../../elsewhere/tiny-llm.gguf"
        let encoded = base + "/models/%2E%2E/%2e%2e/%2e%2E/elsewhere/TinyClassifier.mlpackage.zip"
        let dotted = try manifest("dotted", live
            .replacingOccurrences(of: base + "/models/m/1.1.0/tiny-llm.gguf", with: climbing)
            .replacingOccurrences(of: base + "/models/m/1.0.0/TinyClassifier.mlpackage.zip", with: encoded))
        let (dottedResult, dottedReport) = try verifyJSON([dotted, "--base-url", base, "--allow-http"])
        XCTAssertEqual(dottedResult.status, 1)
        for url in [climbing, encoded] {
            XCTAssertTrue(dottedReport?.checks.contains { $0.check == "manifest.urls" && $0.status == .fail && $0.subject == url && $0.detail.contains("'.' or '..' segment") && $0.detail.contains("not fetched") } ?? false, "\(url):\n\(dottedResult.stdout)")
        }
        XCTAssertFalse(dottedReport?.checks.contains { $0.check.hasPrefix("artifact.") } ?? true, "a URL climbing out of the prefix must not be fetched: \(dottedResult.stdout)")

        // Plain http without --allow-http: every URL fails, nothing is fetched.
        let (plainResult, plainReport) = try verifyJSON([work.at("site/manifest.json"), "--base-url", base])
        XCTAssertEqual(plainResult.status, 1)
        XCTAssertEqual(plainReport?.checks.filter { $0.check == "manifest.urls" && $0.detail.contains("plain http") }.count, 2, plainResult.stdout)
        XCTAssertFalse(plainReport?.checks.contains { $0.check.hasPrefix("artifact.") } ?? true)

        // A local file's HTTP headers are not checked: said in a passing check, so --strict can pass.
        let (strictLocal, strictLocalReport) = try verifyJSON([work.at("site/manifest.json"), "--base-url", base, "--allow-http", "--strict"])
        XCTAssertEqual(strictLocal.status, 0, strictLocal.stdout)
        XCTAssertTrue(strictLocalReport?.checks.contains { $0.check == "manifest.headers" && $0.status == .skip && $0.detail.hasPrefix("not checked: read from a local file") } ?? false, strictLocal.stdout)

        // A manifest over the size cap is refused before parsing.
        try String(repeating: " ", count: 5 << 20).appending(live).write(toFile: work.at("site/manifest.json"), atomically: true, encoding: .utf8)
        let bigLocal = try modelcast(["verify", work.at("site/manifest.json"), "--base-url", base, "--allow-http"])
        XCTAssertNotEqual(bigLocal.status, 0)
        XCTAssertTrue(bigLocal.stderr.contains("\(work.at("site/manifest.json")) is larger than 4194304 bytes"), bigLocal.stderr)
        let (bigResult, bigReport) = try verifyJSON([base + "/manifest.json", "--allow-http"])
        XCTAssertEqual(bigResult.status, 1)
        XCTAssertTrue(bigReport?.checks.contains { $0.check == "manifest.size" && $0.status == .fail } ?? false, bigResult.stdout)

        // Not a manifest at all.
        try "{\"hello\": 1}".write(toFile: work.at("site/manifest.json"), atomically: true, encoding: .utf8)
        let (_, junk) = try verifyJSON([work.at("site")])
        XCTAssertTrue(junk?.checks.contains { $0.check == "manifest.parse" && $0.status == .fail && $0.detail.contains("cannot tell its profile") } ?? false)
    }

    /// s3:// verify reads the target through the S3 API: a URL-mode option is refused by
    /// name during validation, before any connection (a loopback listener sees none).
    func testS3ModeRefusesURLOptionsBeforeConnecting() throws {
        let port = try freeLoopbackPort()
        let listener = try BackgroundProcess("/usr/bin/env", ["python3", "-c", """
            import sys
            from http.server import BaseHTTPRequestHandler, HTTPServer
            class H(BaseHTTPRequestHandler):
                def answer(self):
                    sys.stderr.write("request %s %s\\n" % (self.command, self.path)); sys.stderr.flush()
                    self.send_response(404); self.send_header("Content-Length", "0"); self.send_header("Connection", "close"); self.end_headers()
                do_GET = do_HEAD = do_PUT = do_POST = answer
                def log_message(self, *args): pass
            server = HTTPServer(("127.0.0.1", int(sys.argv[1])), H)
            print("ready", flush=True)
            server.serve_forever()
            """, String(port)])
        XCTAssertEqual(listener.firstLine, "ready")
        var environment = ProcessInfo.processInfo.environment
        environment["AWS_ACCESS_KEY_ID"] = "test"
        environment["AWS_SECRET_ACCESS_KEY"] = "test"
        environment["AWS_REGION"] = "us-east-1"
        environment["AWS_EC2_METADATA_DISABLED"] = "true"
        let endpoint = ["--endpoint", "http://127.0.0.1:\(port)"]
        let refused = try modelcast(["verify", "s3://bucket/p", "--state", "x"] + endpoint, environment: environment)
        XCTAssertEqual(refused.status, 2, refused.stdout + refused.stderr)
        XCTAssertTrue(refused.stderr.contains("--state applies to a manifest URL, directory or file, not to s3://bucket/p"), refused.stderr)
        XCTAssertEqual(listener.standardError, "", "validation must fail before any request")
        // The listener does see requests: the same command without --state reaches it.
        let reached = try modelcast(["verify", "s3://bucket/p"] + endpoint, environment: environment)
        XCTAssertNotEqual(reached.status, 0)
        XCTAssertTrue(listener.standardError.contains("request "), "the listener saw nothing: \(reached.stdout + reached.stderr)")
    }

    func testUnsafeZipIsRefused() throws {
        let work = try Scratch()
        try shell("python3 -c 'import zipfile; z = zipfile.ZipFile(\"\(work.at("evil.zip"))\", \"w\"); z.writestr(\"Model.mlpackage/../../evil.sh\", \"echo pwned\"); z.writestr(\"Model.mlpackage/Manifest.json\", \"{}\"); z.close()'")
        let result = try modelcast(["publish", work.at("evil.zip"), "--name", "m", "--version", "1.0.0", "--base-url", "https://cdn.example.com", "--to", work.at("site")], environment: environment)
        XCTAssertEqual(result.status, 0, result.stderr)
        let (verifyResult, report) = try verifyJSON([work.at("site")])
        XCTAssertEqual(verifyResult.status, 1)
        XCTAssertTrue(report?.checks.contains { $0.check == "artifact.zip" && $0.status == .fail && $0.detail.contains("Model.mlpackage/../../evil.sh") } ?? false, verifyResult.stdout)
    }

    // MARK: - A misbehaving server

    /// A detached signature that exists but cannot be fetched (HTTP 500) is a failure, not
    /// "not signed", and a good inline signature does not let verify go on.
    func testAnUnfetchableSignatureFailsEvenWithAGoodInlineOne() throws {
        let work = try Scratch()
        let port = try freeLoopbackPort()
        let keys = try modelcast(["keygen", "--unencrypted", "--public-key", work.at("k.pub"), "--secret-key", work.at("k.key")])
        XCTAssertEqual(keys.status, 0, keys.stderr)
        for site in ["ok", "sigerror"] {
            let result = try modelcast(["publish", "examples/models/tiny-llm.gguf", "--name", "m", "--version", "1.0.0", "--base-url", "http://127.0.0.1:\(port)/\(site)",
                                        "--to", try work.atMadeParent("sites/\(site)"), "--sign", work.at("k.key"), "--inline-signature"], environment: environment)
            XCTAssertEqual(result.status, 0, result.stderr)
        }
        let server = try BackgroundProcess("/usr/bin/env", ["python3", repositoryRoot + "/Tests/Fixtures/misbehaving_server.py", work.at("sites"), String(port)])
        XCTAssertEqual(server.firstLine, "ready")

        let (good, goodReport) = try verifyJSON(["http://127.0.0.1:\(port)/ok/manifest.json", "--allow-http", "--public-key", work.at("k.pub")])
        XCTAssertEqual(good.status, 0, good.stdout)
        XCTAssertEqual(statuses(goodReport, "manifest.signature"), [.pass])
        XCTAssertEqual(statuses(goodReport, "manifest.inline-signature"), [.pass])

        let (broken, report) = try verifyJSON(["http://127.0.0.1:\(port)/sigerror/manifest.json", "--allow-http", "--public-key", work.at("k.pub"), "--retries", "0"])
        XCTAssertEqual(broken.status, 1, broken.stdout)
        XCTAssertTrue(report?.checks.contains { $0.check == "manifest.signature" && $0.status == .fail && $0.subject.hasSuffix("/sigerror/manifest.json.minisig") && $0.detail == "HTTP 500 fetching the signature" } ?? false, broken.stdout)
        XCTAssertEqual(statuses(report, "manifest.inline-signature"), [.pass])
        XCTAssertEqual(statuses(report, "manifest.trust"), [.fail])
        XCTAssertFalse(report?.checks.contains { $0.detail.contains("not signed") } ?? true, "a signature that could not be fetched is not a missing one: \(broken.stdout)")
        XCTAssertFalse(report?.checks.contains { $0.check.hasPrefix("artifact.") } ?? true, "nothing is fetched after a signature failure")
    }

    func testMisbehavingServers() throws {
        let work = try Scratch()
        let port = try freeLoopbackPort()
        let modes = ["ok", "gzip", "norange", "flaky", "shortcache", "longmanifest", "wrongtype", "corrupt", "extra", "redirect", "nolength", "drip", "deflate", "br", "negotiate", "rangeflaky", "rangeflaky2", "wrongtotal", "shortcdn", "quoted"]
        for mode in modes {
            try publishTwoReleases(to: work.at("sites/\(mode)"), base: "http://127.0.0.1:\(port)/\(mode)")
        }
        let server = try BackgroundProcess("/usr/bin/env", ["python3", repositoryRoot + "/Tests/Fixtures/misbehaving_server.py", work.at("sites"), String(port)])
        XCTAssertEqual(server.firstLine, "ready")

        func run(_ mode: String, _ extra: [String] = []) throws -> (ProcessOutput, VerifyReport?) {
            try verifyJSON(["http://127.0.0.1:\(port)/\(mode)/manifest.json", "--allow-http"] + extra)
        }
        func assertFails(_ mode: String, _ check: String, _ fragment: String, _ extra: [String] = [], file: StaticString = #filePath, line: UInt = #line) throws {
            let (result, report) = try run(mode, extra)
            XCTAssertEqual(result.status, 1, "\(mode) should fail", file: file, line: line)
            XCTAssertTrue(report?.checks.contains { $0.check == check && $0.status == .fail && $0.detail.contains(fragment) } ?? false,
                          "\(mode): no failing \(check) containing '\(fragment)' in:\n\(result.stdout)", file: file, line: line)
        }

        let (ok, okReport) = try run("ok")
        XCTAssertEqual(ok.status, 0, ok.stdout)
        XCTAssertEqual(okReport?.failures, 0)
        try assertFails("gzip", "artifact.content-encoding", "gzip")
        let (_, gzipReport) = try run("gzip")
        XCTAssertTrue(gzipReport?.checks.contains { $0.check == "manifest.content-encoding" && $0.status == .warn } ?? false, "a gzipped manifest still parses, with a warning")
        // deflate (the zlib format) is decoded too; objects must still be served as stored.
        try assertFails("deflate", "artifact.content-encoding", "deflate")
        let (_, deflateReport) = try run("deflate")
        XCTAssertEqual(statuses(deflateReport, "manifest.content-encoding"), [.warn], "a deflate-encoded manifest still parses, with a warning")
        XCTAssertEqual(statuses(deflateReport, "manifest.parse"), [.pass])
        // An encoding verify cannot decode fails by its name and the URL, not as bad JSON.
        let brURL = "http://127.0.0.1:\(port)/br/manifest.json"
        try assertFails("br", "manifest.content-encoding", "\(brURL): cannot decode its Content-Encoding 'br'")
        let (_, brReport) = try run("br")
        XCTAssertEqual(statuses(brReport, "manifest.parse"), [], "an undecodable body is not parsed")
        // verify never offers br, so a server that would brotli-encode answers with the stored bytes.
        let (negotiated, negotiatedReport) = try run("negotiate")
        XCTAssertEqual(negotiated.status, 0, negotiated.stdout)
        XCTAssertEqual(statuses(negotiatedReport, "manifest.content-encoding"), [])
        try assertFails("norange", "artifact.range", "HTTP 200 for bytes 0-99, expected 206")
        try assertFails("shortcache", "artifact.cache-control", "'public, max-age=60'")
        // Cache-Control is read as the manifest's is: s-maxage (what CDNs obey) counts, quotes do not.
        try assertFails("shortcdn", "artifact.cache-control", "s-maxage=60 is shorter than a day")
        let (quoted, quotedReport) = try run("quoted")
        XCTAssertEqual(quoted.status, 0, quoted.stdout)
        XCTAssertEqual(statuses(quotedReport, "artifact.cache-control"), [.pass, .pass])
        try assertFails("longmanifest", "manifest.cache-control", "max-age=3600")
        try assertFails("wrongtype", "artifact.content-type", "'text/html'")
        try assertFails("corrupt", "artifact.sha256", "manifest says")
        try assertFails("extra", "artifact.size", "more than the 1024 bytes the manifest promises")
        try assertFails("extra", "artifact.content-length", "Content-Length 1025, manifest says 1024")

        // 503 twice, then fine: retries absorb it; without retries it fails.
        let (flaky, _) = try run("flaky")
        XCTAssertEqual(flaky.status, 0, flaky.stdout)
        try publishTwoReleases(to: work.at("sites/flaky2"), base: "http://127.0.0.1:\(port)/flaky2")
        let (flakyNoRetry, _) = try verifyJSON(["http://127.0.0.1:\(port)/flaky2/manifest.json", "--allow-http", "--retries", "0"])
        XCTAssertEqual(flakyNoRetry.status, 1)

        // The zip's central directory is read with retried Range requests too.
        let (rangeFlaky, rangeFlakyReport) = try run("rangeflaky")
        XCTAssertEqual(rangeFlaky.status, 0, rangeFlaky.stdout)
        XCTAssertEqual(statuses(rangeFlakyReport, "artifact.zip"), [.pass])
        try assertFails("rangeflaky2", "artifact.zip", "HTTP 503 for bytes", ["--retries", "0"])
        // A 206 must be a slice of the object that was hashed.
        try assertFails("wrongtotal", "artifact.zip", "says the object has 19020 bytes, but the body downloaded and hashed has 19019")

        // Redirects are followed (same scheme: a warning).
        let (redirected, redirectReport) = try run("redirect")
        XCTAssertEqual(redirected.status, 0, redirected.stdout)
        XCTAssertTrue(redirectReport?.checks.contains { $0.check == "artifact.redirect" && $0.status == .warn } ?? false)

        // No Content-Length: devices cannot show progress (a warning), bytes still checked.
        let (noLength, noLengthReport) = try run("nolength")
        XCTAssertEqual(noLength.status, 0, noLength.stdout)
        XCTAssertTrue(noLengthReport?.checks.contains { $0.check == "artifact.content-length" && $0.status == .warn } ?? false)

        // One byte a second: the deadline ends it instead of hanging.
        let started = Date()
        try assertFails("drip", "artifact.fetch", "no complete response within", ["--timeout", "4", "--retries", "0"])
        XCTAssertLessThan(Date().timeIntervalSince(started), 60, "the run must end near its deadline")
    }
}
