import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// `modelcast verify` against hosts that redirect where they should not, cannot be
/// reached, present an untrusted certificate or stall (issue #11 items 5 and 6). Every
/// server is on 127.0.0.1; an address that is not is never contacted, because verify
/// refuses it before any request.
final class VerifyNetworkTests: XCTestCase {
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

    /// The request lines ("GET /path?query") the misbehaving server logged.
    func requests(_ server: BackgroundProcess) -> [String] {
        server.standardError.split(separator: "\n").map(String.init).filter { $0.hasPrefix("GET ") || $0.hasPrefix("HEAD ") }
    }

    // MARK: - Item 5: every redirect hop passes the manifest URL rules

    func testRedirectHopsMustPassTheURLRulesBeforeTheyAreRequested() throws {
        let work = try Scratch()
        let port = try freeLoopbackPort()
        let modes = ["ok", "redirect", "redirectout", "redirectdisguised", "redirectmeta", "redirectloop", "redirectmanifest"]
        for mode in modes {
            try publishTwoReleases(to: work.at("sites/\(mode)"), base: "http://127.0.0.1:\(port)/\(mode)")
        }
        let server = try BackgroundProcess("/usr/bin/env", ["python3", repositoryRoot + "/Tests/Fixtures/misbehaving_server.py", work.at("sites"), String(port)])
        XCTAssertEqual(server.firstLine, "ready")
        func run(_ mode: String, _ extra: [String] = []) throws -> (ProcessOutput, VerifyReport?) {
            try verifyJSON(["http://127.0.0.1:\(port)/\(mode)/manifest.json", "--allow-http"] + extra)
        }
        let gguf = "models/m/1.1.0/tiny-llm.gguf"

        // A redirect inside the prefix is followed, with a warning.
        let (inside, insideReport) = try run("redirect")
        XCTAssertEqual(inside.status, 0, inside.stdout)
        XCTAssertTrue(checks(insideReport, "artifact.redirect", .warn).contains { $0.detail.contains("/redirect/\(gguf)?moved=1") }, inside.stdout)

        // To another path of the same server, outside the prefix: refused, named, and never requested.
        let outsideHop = "http://127.0.0.1:\(port)/ok/\(gguf)"
        let (outside, outsideReport) = try run("redirectout")
        XCTAssertEqual(outside.status, 1, outside.stdout)
        let refusal = try XCTUnwrap(checks(outsideReport, "artifact.redirect", .fail).first { $0.subject.hasSuffix("/redirectout/\(gguf)") }, outside.stdout)
        XCTAssertTrue(refusal.detail.contains("HTTP 302 redirects to \(outsideHop), which was not requested"), refusal.detail)
        XCTAssertTrue(refusal.detail.contains("outside the expected prefix http://127.0.0.1:\(port)/redirectout/"), refusal.detail)
        XCTAssertFalse(requests(server).contains { $0.hasPrefix("GET /ok/") }, "a refused hop must not be requested: \(requests(server))")
        XCTAssertTrue(checks(outsideReport, "artifact.sha256", .pass).isEmpty, "nothing was downloaded through the refused hop")
        // --allow-external-urls accepts such a hop as it accepts such a manifest URL: followed, with a warning.
        let (external, externalReport) = try run("redirectout", ["--allow-external-urls"])
        XCTAssertEqual(external.status, 0, external.stdout)
        XCTAssertEqual(checks(externalReport, "artifact.redirect", .warn).count, 2, external.stdout)
        XCTAssertTrue(requests(server).contains("GET /ok/\(gguf)"), "an accepted hop is requested")

        // To 127.0.0.1 written as one decimal number (it looks like any other host; if it were
        // followed, this very server would log the request): refused before any request.
        let disguisedHop = "http://2130706433:\(port)/ok/models/m/1.0.0/TinyClassifier.mlpackage.zip"
        let before = requests(server).count
        let (disguised, disguisedReport) = try run("redirectdisguised")
        XCTAssertEqual(disguised.status, 1, disguised.stdout)
        let disguisedRefused = checks(disguisedReport, "artifact.redirect", .fail).contains { $0.detail.contains(disguisedHop) && $0.detail.contains("outside the expected prefix") }
        XCTAssertTrue(disguisedRefused, disguised.stdout)
        let during = requests(server).dropFirst(before)
        XCTAssertEqual(Set(during.map { $0.split(separator: "/").dropFirst().first.map(String.init) ?? "" }), ["redirectdisguised"], "only the site itself was requested: \(during)")
        // Only when a disguised address is known to be refused is a real outside address tried:
        // verify must refuse it without contacting it (this test never sends it anything).
        guard disguisedRefused else { return XCTFail("redirects are followed anywhere; not trying the metadata address") }

        // To a cloud metadata address: refused, by URL and rule, before any request (so at once).
        let started = Date()
        let (meta, metaReport) = try run("redirectmeta", ["--retries", "0"])
        XCTAssertLessThan(Date().timeIntervalSince(started), 10, "nothing was waited for")
        XCTAssertEqual(meta.status, 1, meta.stdout)
        let metaRefusals = checks(metaReport, "artifact.redirect", .fail)
        XCTAssertEqual(metaRefusals.count, 2, meta.stdout)
        for check in metaRefusals {
            XCTAssertTrue(check.detail.contains("HTTP 302 redirects to http://169.254.169.254/latest/meta-data/, which was not requested: outside the expected prefix"), check.detail)
        }
        XCTAssertFalse(metaReport?.checks.contains { $0.check == "artifact.fetch" } ?? true, meta.stdout)

        // A chain longer than the cap: five redirects are followed, the sixth is not.
        let (loop, loopReport) = try run("redirectloop")
        XCTAssertEqual(loop.status, 1, loop.stdout)
        let cap = try XCTUnwrap(checks(loopReport, "artifact.redirect", .fail).first { $0.subject.hasSuffix("/redirectloop/\(gguf)") }, loop.stdout)
        XCTAssertTrue(cap.detail.contains("more than 5 redirects"), cap.detail)
        XCTAssertTrue(cap.detail.contains("/redirectloop/\(gguf)?hop=6"), "names the hop not taken: \(cap.detail)")
        XCTAssertEqual(requests(server).filter { $0.hasPrefix("GET /redirectloop/\(gguf)") }.count, 6, "the first request and five redirects")
        XCTAssertFalse(requests(server).contains("GET /redirectloop/\(gguf)?hop=6"))

        // The manifest's own redirect passes the same rules (its directory or the --base-url prefixes).
        let (manifestRedirect, manifestReport) = try run("redirectmanifest")
        XCTAssertEqual(manifestRedirect.status, 1, manifestRedirect.stdout)
        XCTAssertTrue(checks(manifestReport, "manifest.redirect", .fail).contains { $0.detail.contains("redirects to http://127.0.0.1:\(port)/ok/manifest.json, which was not requested") }, manifestRedirect.stdout)
        XCTAssertFalse(requests(server).contains("GET /ok/manifest.json"))
    }

    // MARK: - Item 6: failures say what happened, and how long it took

    func testARefusedConnectionFailsFastAndSaysSo() throws {
        let port = try freeLoopbackPort()  // nothing listens there
        let url = "http://127.0.0.1:\(port)/ml/manifest.json"
        let started = Date()
        let (result, report) = try verifyJSON([url, "--allow-http"])
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertLessThan(elapsed, 8, "a refused connection must not wait for the connect timeout: \(result.stdout)")
        XCTAssertEqual(result.status, 3, "a host that cannot be reached is a network failure: \(result.stdout)")
        let failure = try XCTUnwrap(checks(report, "manifest.fetch", .fail).first, result.stdout)
        XCTAssertTrue(failure.detail.contains("connection refused by 127.0.0.1:\(port)"), failure.detail)
        XCTAssertTrue(failure.detail.contains("(4 attempts in "), "retries and the real time are said: \(failure.detail)")
        XCTAssertFalse(failure.detail.contains("no complete response"), failure.detail)
        XCTAssertLessThanOrEqual(try XCTUnwrap(totalSeconds(in: failure.detail)), elapsed)
        // The text table says the same, with the same status.
        let text = try modelcast(["verify", url, "--allow-http", "--retries", "0"])
        XCTAssertEqual(text.status, 3)
        XCTAssertTrue(text.stdout.contains("connection refused by 127.0.0.1:\(port) (after "), text.stdout)
    }

    func testAnUntrustedCertificateIsNamed() throws {
        let work = try Scratch()
        let port = try freeLoopbackPort()
        try publishTwoReleases(to: work.at("sites/ok"), base: "https://127.0.0.1:\(port)/ok")
        try shell("openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout '\(work.at("key.pem"))' -out '\(work.at("cert.pem"))' 2>/dev/null")
        let server = try BackgroundProcess("/usr/bin/env", ["python3", repositoryRoot + "/Tests/Fixtures/misbehaving_server.py", work.at("sites"), String(port), work.at("cert.pem"), work.at("key.pem")])
        XCTAssertEqual(server.firstLine, "ready")
        // The server does serve TLS with that certificate (curl trusting it gets the manifest).
        XCTAssertTrue(try shell("curl -sS --cacert '\(work.at("cert.pem"))' https://127.0.0.1:\(port)/ok/manifest.json").contains("\"sequence\": 2"))

        let started = Date()
        let (result, report) = try verifyJSON(["https://127.0.0.1:\(port)/ok/manifest.json"])
        XCTAssertLessThan(Date().timeIntervalSince(started), 8, result.stdout)
        XCTAssertEqual(result.status, 1, "devices refuse this host: a failed check, not a network failure: \(result.stdout)")
        let failure = try XCTUnwrap(checks(report, "manifest.fetch", .fail).first, result.stdout)
        XCTAssertTrue(failure.detail.contains("TLS handshake with 127.0.0.1:\(port) failed: certificate untrusted"), failure.detail)
        XCTAssertTrue(failure.detail.contains("(after "), "not retried: a certificate does not become trusted: \(failure.detail)")
        XCTAssertFalse(failure.detail.contains("no complete response"), failure.detail)
    }

    func testAStallSaysAfterHowManyBytesAndTheRealTime() throws {
        let work = try Scratch()
        let port = try freeLoopbackPort()
        // 2 MiB: its deadline (--request-timeout + size at 256 KiB/s = 11 s) leaves room for
        // the idle timeout (3 s here) to end each attempt.
        let model = try work.write("big.bin", patternBytes(2 << 20))
        let published = try modelcast(["publish", model, "--name", "m", "--version", "1.0.0", "--base-url", "http://127.0.0.1:\(port)/stall", "--to", try work.atMadeParent("sites/stall")], environment: environment)
        XCTAssertEqual(published.status, 0, published.stderr)
        let server = try BackgroundProcess("/usr/bin/env", ["python3", repositoryRoot + "/Tests/Fixtures/misbehaving_server.py", work.at("sites"), String(port)])
        XCTAssertEqual(server.firstLine, "ready")
        let url = "http://127.0.0.1:\(port)/stall/manifest.json"
        // The server sends the headers and half the body (1048576 bytes), then nothing.
        let half = "stalled after 1048576 bytes of the body"

        var started = Date()
        let (once, onceReport) = try verifyJSON([url, "--allow-http", "--request-timeout", "3", "--retries", "0"])
        var elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(once.status, 1, once.stdout)
        let stalled = try XCTUnwrap(checks(onceReport, "artifact.fetch", .fail).first, once.stdout)
        XCTAssertTrue(stalled.detail.contains("\(half): nothing received for 3."), stalled.detail)
        var said = try XCTUnwrap(totalSeconds(in: stalled.detail), stalled.detail)
        XCTAssertGreaterThanOrEqual(said, 2.9, stalled.detail)
        XCTAssertLessThanOrEqual(said, elapsed, stalled.detail)
        XCTAssertFalse(stalled.detail.contains("within 15 s"), stalled.detail)

        // Retried once: the time both attempts took is said, not the last one's share.
        started = Date()
        let (twice, twiceReport) = try verifyJSON([url, "--allow-http", "--request-timeout", "3", "--retries", "1"])
        elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(twice.status, 1, twice.stdout)
        let retried = try XCTUnwrap(checks(twiceReport, "artifact.fetch", .fail).first, twice.stdout)
        XCTAssertTrue(retried.detail.contains(half), retried.detail)
        XCTAssertTrue(retried.detail.contains("(2 attempts in "), retried.detail)
        said = try XCTUnwrap(totalSeconds(in: retried.detail), retried.detail)
        XCTAssertGreaterThanOrEqual(said, 6, "both attempts' time: \(retried.detail)")
        XCTAssertLessThanOrEqual(said, elapsed, retried.detail)

        // The run's deadline (--timeout) ends it mid-stall: said as a deadline, with the real
        // time and where the body stopped.
        started = Date()
        let (deadline, deadlineReport) = try verifyJSON([url, "--allow-http", "--timeout", "4", "--retries", "0"])
        elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(deadline.status, 1, deadline.stdout)
        let late = try XCTUnwrap(checks(deadlineReport, "artifact.fetch", .fail).first, deadline.stdout)
        XCTAssertTrue(late.detail.contains("no complete response within "), late.detail)
        XCTAssertTrue(late.detail.contains(half + " (nothing for "), late.detail)
        said = try XCTUnwrap(totalSeconds(in: late.detail), late.detail)
        XCTAssertLessThanOrEqual(said, elapsed, late.detail)
        XCTAssertGreaterThan(said, 2, late.detail)
    }

    func testAManifestThatIsNotUTF8SaysWhere() throws {
        let work = try Scratch()
        let base = "https://cdn.example.com/ml"
        try publishTwoReleases(to: work.at("site"), base: base)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: work.at("site/manifest.json"))))
        // A Latin-1 "é" in the channel name: one byte that cannot start a UTF-8 sequence there.
        let channel = Array("\"channel\": \"stable".utf8)
        let at = try XCTUnwrap((0...(bytes.count - channel.count)).first { Array(bytes[$0..<($0 + channel.count)]) == channel }) + channel.count
        bytes.insert(0xE9, at: at)
        try Data(bytes).write(to: URL(fileURLWithPath: work.at("site/manifest.json")))

        let (result, report) = try verifyJSON([work.at("site")])
        XCTAssertEqual(result.status, 1, result.stdout)
        let failure = try XCTUnwrap(checks(report, "manifest.parse", .fail).first, result.stdout)
        XCTAssertTrue(failure.detail.contains("not valid UTF-8 JSON: the first bad byte, 0xE9, is at byte offset \(at)"), failure.detail)
        XCTAssertFalse(failure.detail.contains("Expected to decode"), failure.detail)
        // A local manifest file says the same.
        try FileManager.default.copyItem(atPath: work.at("site/manifest.json"), toPath: work.at("bad.json"))
        let (local, localReport) = try verifyJSON([work.at("bad.json"), "--base-url", base])
        XCTAssertEqual(local.status, 1)
        XCTAssertTrue(checks(localReport, "manifest.parse", .fail).contains { $0.detail.contains("byte offset \(at)") }, local.stdout)
    }

    /// The S3 client: a closed endpoint port fails in seconds, not after four connect
    /// timeouts, and says "connection refused" instead of a garbled NIO error.
    func testS3EndpointRefusingConnectionsFailsFastWithItsCause() throws {
        let port = try freeLoopbackPort()
        var environment = ProcessInfo.processInfo.environment
        environment["AWS_ACCESS_KEY_ID"] = "test"
        environment["AWS_SECRET_ACCESS_KEY"] = "test"
        environment["AWS_REGION"] = "us-east-1"
        environment["AWS_EC2_METADATA_DISABLED"] = "true"
        environment["AWS_ENDPOINT_URL"] = "http://127.0.0.1:\(port)"
        environment.removeValue(forKey: "AWS_PROFILE")
        let started = Date()
        let history = try modelcast(["history", "s3://models/p"], environment: environment)
        XCTAssertLessThan(Date().timeIntervalSince(started), 15, history.stderr)
        XCTAssertEqual(history.status, 3, history.stderr)
        XCTAssertTrue(history.stderr.contains("connection refused by 127.0.0.1:\(port) (5 attempts in "), history.stderr)
        for garbled in ["HTTP 0", "errno", "ConnectionError", "error set"] {
            XCTAssertFalse(history.stderr.contains(garbled), history.stderr)
        }
        // verify s3:// reports it in its table, as a network failure.
        let (verified, report) = try verifyJSON(["s3://models/p"], environment: environment)
        XCTAssertEqual(verified.status, 3, verified.stdout)
        XCTAssertTrue(checks(report, "storage", .fail).contains { $0.detail.contains("connection refused by 127.0.0.1:\(port)") }, verified.stdout)
    }

    /// The time a message says the whole fetch took: "within N.N s", "in N.N s)", "after N.N s)".
    func totalSeconds(in text: String) -> Double? {
        guard let range = text.range(of: "(within|in|after) [0-9]+\\.[0-9] s", options: .regularExpression) else { return nil }
        return Double(text[range].split(separator: " ")[1])
    }
}
