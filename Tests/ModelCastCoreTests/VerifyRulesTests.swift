import AsyncHTTPClient
import Foundation
import NIOCore
import XCTest
@testable import ModelCastCore

/// The verifier's redirect rules, failure messages, UTF-8 check and history freshness,
/// against a fake host: nothing here opens a socket, so addresses that must never be
/// contacted (a cloud metadata address) can be named safely.
final class VerifyRulesTests: XCTestCase {
    /// A host that answers from a table and records every URL it was asked for.
    final class FakeHost: ObjectFetcher, @unchecked Sendable {
        private let lock = NSLock()
        private var log: [String] = []
        let answer: @Sendable (String) -> (Int, [String: String], [UInt8])

        init(_ answer: @escaping @Sendable (String) -> (Int, [String: String], [UInt8])) { self.answer = answer }

        var requested: [String] {
            lock.lock()
            defer { lock.unlock() }
            return log
        }

        func fetch(
            _ url: String, range: ClosedRange<Int64>?, limit: Int64, deadline: Date,
            consume: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Void
        ) async throws -> FetchResponse {
            lock.withLock { log.append(url) }
            var (status, headers, body) = answer(url)
            if let range, status == 200 {
                let end = min(Int(range.upperBound), body.count - 1)
                headers["content-range"] = "bytes \(range.lowerBound)-\(end)/\(body.count)"
                body = Array(body[Int(range.lowerBound)...end])
                status = 206
            }
            headers["content-length"] = String(body.count)
            let take = min(body.count, Int(limit))
            try body.withUnsafeBytes { try consume(UnsafeRawBufferPointer(rebasing: $0[0..<take])) }
            return FetchResponse(status: status, headers: headers, bytesRead: Int64(take), exceededLimit: body.count > take)
        }
    }

    static let base = "https://cdn.test/ml"
    static let artifactURL = base + "/models/m/1.0.0/a.bin"
    static let artifact = Array("model bytes, not many of them".utf8)

    /// A modelcast manifest naming one artifact at `artifactURL`.
    func manifest() throws -> Data {
        let file = ReleaseFile(name: "a.bin", key: "models/m/1.0.0/a.bin", url: Self.artifactURL,
                               sha256: try SHA256Hasher.digest(Data(Self.artifact)).hex, size: Int64(Self.artifact.count),
                               contentType: "application/octet-stream")
        let release = Release(sequence: 1, publishedAt: "2026-11-22T00:00:00Z", channel: "stable", profile: "modelcast",
                              models: ["m": ReleaseModel(version: "1.0.0", files: [file])])
        return Data(try ManifestProfile.modelcast.render(release).serialized().utf8)
    }

    static let objectHeaders = ["cache-control": CachePolicy.immutable, "content-type": "application/octet-stream"]

    func verify(_ host: FakeHost, allowHTTP: Bool = false, allowExternal: Bool = false) async throws -> VerifyReport {
        var options = VerifyOptions()
        options.expectedPrefixes = [Self.base]
        options.allowHTTP = allowHTTP
        options.allowExternalURLs = allowExternal
        options.retries = 0
        return await Verifier(fetcher: host, options: options).verify(manifestURL: Self.base + "/manifest.json", localManifest: try manifest())
    }

    func redirectFailures(_ report: VerifyReport) -> [String] {
        report.checks.filter { $0.check == "artifact.redirect" && $0.status == .fail }.map(\.detail)
    }

    // MARK: - Redirect hops

    func testARedirectToTheMetadataAddressIsNeverRequested() async throws {
        let host = FakeHost { url in
            url == Self.artifactURL ? (302, ["location": "http://169.254.169.254/latest/meta-data/"], []) : (404, [:], [])
        }
        // Even with --allow-http: https never leads to http, and the hop is outside the prefix.
        let report = try await verify(host, allowHTTP: true)
        XCTAssertEqual(host.requested, [Self.artifactURL], "only the manifest's own URL was requested")
        XCTAssertFalse(report.passed)
        XCTAssertEqual(redirectFailures(report), [
            "m 1.0.0/a.bin: \(Self.artifactURL): HTTP 302 redirects to http://169.254.169.254/latest/meta-data/, which was not requested: a redirect from https to plain http; outside the expected prefix \(Self.base)/ (--allow-external-urls to accept)",
        ])
    }

    func testEveryHopRuleRefusesBeforeRequesting() async throws {
        let cases: [(location: String, allowHTTP: Bool, reason: String)] = [
            ("http://cdn.test/ml/models/m/1.0.0/a.bin", true, "a redirect from https to plain http"),
            ("http://cdn.test/ml/models/m/1.0.0/a.bin", false, "a redirect from https to plain http"),
            ("/ml/models/../../etc/passwd", false, "'.' or '..' segment"),
            ("/ml/models/%2e%2e/x", false, "'.' or '..' segment"),
            ("/ml/models//a.bin", false, "empty"),
            ("./../../admin", false, "'.' or '..' segment"),
            ("https://cdn.test/other/a.bin", false, "outside the expected prefix"),
            ("https://cdn.test.evil.example/ml/a.bin", false, "outside the expected prefix"),
            ("ftp://cdn.test/ml/a.bin", false, "not an absolute http(s) URL"),
            ("file:///etc/passwd", false, "not an absolute http(s) URL"),
        ]
        for (location, allowHTTP, reason) in cases {
            let host = FakeHost { url in url == Self.artifactURL ? (301, ["location": location], []) : (200, Self.objectHeaders, Self.artifact) }
            let report = try await verify(host, allowHTTP: allowHTTP)
            XCTAssertEqual(host.requested, [Self.artifactURL], location)
            XCTAssertTrue(redirectFailures(report).first?.contains(reason) ?? false, "\(location): \(redirectFailures(report))")
        }
    }

    func testAHopInsideThePrefixIsFollowedWithAWarning() async throws {
        let moved = Self.artifactURL + "?v=2"
        let host = FakeHost { url in
            url == Self.artifactURL ? (302, ["location": "a.bin?v=2"], []) : url == moved ? (200, Self.objectHeaders, Self.artifact) : (404, [:], [])
        }
        let report = try await verify(host)
        XCTAssertTrue(report.passed, report.text)
        XCTAssertEqual(report.checks.filter { $0.check == "artifact.redirect" }.map(\.status), [.warn])
        XCTAssertEqual(host.requested.filter { $0 == moved }.count, 2, "the download and the Range request both follow it")
        XCTAssertTrue(report.checks.contains { $0.check == "artifact.sha256" && $0.status == .pass })
        // --allow-external-urls accepts a hop outside the prefix as it accepts such a manifest URL.
        let elsewhere = "https://mirror.test/a.bin"
        let external = FakeHost { url in
            url == Self.artifactURL ? (302, ["location": elsewhere], []) : url == elsewhere ? (200, Self.objectHeaders, Self.artifact) : (404, [:], [])
        }
        let externalReport = try await verify(external, allowExternal: true)
        XCTAssertTrue(externalReport.passed, externalReport.text)
        XCTAssertTrue(external.requested.contains(elsewhere))
    }

    func testAtMostFiveRedirectsAreFollowed() async throws {
        let host = FakeHost { url in
            let hop = Int(url.components(separatedBy: "?n=").dropFirst().first ?? "0") ?? 0
            return (307, ["location": "\(Self.artifactURL)?n=\(hop + 1)"], [])
        }
        let report = try await verify(host)
        XCTAssertEqual(host.requested, [Self.artifactURL] + (1...5).map { "\(Self.artifactURL)?n=\($0)" })
        let failure = try XCTUnwrap(redirectFailures(report).first)
        XCTAssertTrue(failure.contains("more than 5 redirects; the next was not requested"), failure)
        XCTAssertTrue(failure.hasSuffix("307 \(Self.artifactURL)?n=5 -> \(Self.artifactURL)?n=6"), failure)
    }

    func testLocationsResolveWithoutRemovingDotSegments() {
        let base = "https://h.test:8443/a/b/c.bin?x=1"
        XCTAssertEqual(URLRules.resolve("https://o.test/z", against: base), "https://o.test/z")
        XCTAssertEqual(URLRules.resolve("//o.test/z", against: base), "https://o.test/z")
        XCTAssertEqual(URLRules.resolve("/z", against: base), "https://h.test:8443/z")
        XCTAssertEqual(URLRules.resolve("d.bin", against: base), "https://h.test:8443/a/b/d.bin")
        XCTAssertEqual(URLRules.resolve("../d.bin", against: base), "https://h.test:8443/a/b/../d.bin")
        XCTAssertEqual(URLRules.resolve("?y=2", against: base), "https://h.test:8443/a/b/c.bin?y=2")
        XCTAssertEqual(URLRules.resolve(" /z ", against: base), "https://h.test:8443/z")
    }

    // MARK: - What a failure says

    func testNetworkFailuresAreNamed() {
        let host = "127.0.0.1:9"
        XCTAssertEqual(NetworkFailure(IOError(errnoCode: ECONNREFUSED, reason: "connection reset (error set)"), host: host),
                       NetworkFailure(kind: .refused, description: "connection refused by 127.0.0.1:9"))
        XCTAssertEqual(NetworkFailure(SocketAddressError.unknown(host: "nowhere.invalid", port: 443), host: "nowhere.invalid:443"),
                       NetworkFailure(kind: .dns, description: "DNS failure: cannot resolve nowhere.invalid"))
        XCTAssertEqual(NetworkFailure(ChannelError.connectTimeout(.seconds(10)), host: host).description, "cannot connect to 127.0.0.1:9: no answer within 10.0 s")
        XCTAssertEqual(NetworkFailure(HTTPClientError.connectTimeout, host: host).kind, .connectTimeout)
        XCTAssertEqual(NetworkFailure(HTTPClientError.readTimeout, host: host).kind, .stalled)
        XCTAssertEqual(NetworkFailure(IOError(errnoCode: EHOSTUNREACH, reason: "connect"), host: host).kind, .unreachable)
        XCTAssertTrue(NetworkFailure(IOError(errnoCode: ECONNREFUSED, reason: "connect"), host: host).hostNotReached)
        XCTAssertFalse(NetworkFailure(kind: .tls, description: "x").isTransient, "a certificate does not become trusted by retrying")
    }

    func testTimeoutsSayTheWholeFetchsTimeAndTheEarlierCause() {
        let url = "https://cdn.test/ml/a.bin"
        let stalled = FetchError.transport(url: url, failure: NetworkFailure(kind: .stalled, description: "stalled"), progress: FetchProgress(answered: true, received: 512, idle: 15))
        XCTAssertEqual(stalled.description, "\(url): stalled after 512 bytes of the body: nothing received for 15.0 s")
        let timedOut = FetchError.timedOut(url: url, seconds: 0.2, progress: FetchProgress(answered: false, received: 0, idle: 0.2))
        let final = FetchError.gaveUp(timedOut, attempts: 2, seconds: 30.04, earlier: stalled)
        XCTAssertEqual(final.description, "\(url): no complete response within 30.0 s, 2 attempts: no answer to the request (nothing for 0.2 s) (the attempt before: stalled after 512 bytes of the body: nothing received for 15.0 s)")
        let refused = FetchError.transport(url: url, failure: NetworkFailure(kind: .refused, description: "connection refused by cdn.test:443"), progress: nil)
        XCTAssertEqual(FetchError.gaveUp(refused, attempts: 4, seconds: 1.93, earlier: refused).description, "\(url): connection refused by cdn.test:443 (4 attempts in 1.9 s)")
        XCTAssertTrue(FetchError.gaveUp(refused, attempts: 4, seconds: 1.93, earlier: refused).hostNotReached)
    }

    func testFirstInvalidUTF8Offset() {
        XCTAssertNil(firstInvalidUTF8Offset(Data("{\"a\": \"é€𝄞\"}".utf8)))
        XCTAssertEqual(firstInvalidUTF8Offset(Data([0x41, 0xE9, 0x42])), 1, "Latin-1 é")
        XCTAssertEqual(firstInvalidUTF8Offset(Data([0x41, 0x42, 0xC0, 0x80])), 2, "overlong NUL")
        XCTAssertEqual(firstInvalidUTF8Offset(Data([0xED, 0xA0, 0x80])), 0, "a UTF-16 surrogate")
        XCTAssertEqual(firstInvalidUTF8Offset(Data([0x41, 0xF4, 0x90, 0x80, 0x80])), 1, "above U+10FFFF")
        XCTAssertEqual(firstInvalidUTF8Offset(Data([0x41, 0x42, 0xE2, 0x82])), 2, "cut short at the end")
        XCTAssertEqual(firstInvalidUTF8Offset(Data([0x80])), 0, "a lone continuation byte")
        XCTAssertThrowsError(try ManifestFacts.read(Data([0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D]), source: "m.json")) { error in
            XCTAssertEqual(String(describing: error).contains("manifest m.json: not valid UTF-8 JSON: the first bad byte, 0xFF, is at byte offset 2"), true, "\(error)")
        }
    }

    // MARK: - History freshness

    func record(_ sequence: Int64, replaces: Int64?, rollback: Int64? = nil) -> Release {
        Release(
            sequence: sequence, publishedAt: "2026-11-22T00:00:00Z", channel: "stable", profile: "modelcast",
            models: ["m": ReleaseModel(version: "1.\(sequence).0", files: [])],
            rollback: rollback.map { ReleaseRollback(sequence: $0, models: [:]) }, replaces: replaces)
    }

    func freshness(_ history: [Release], live: Int64) -> LiveFreshness {
        LiveFreshness(TargetState(
            history: history, manifestInfo: nil, manifestData: Data("{}".utf8), signatureData: nil,
            liveRecord: history.first { $0.sequence == live }))
    }

    func testALiveManifestOlderThanOneThatWentLiveIsStale() {
        let history = [record(1, replaces: nil), record(2, replaces: 1, rollback: 1), record(3, replaces: 2, rollback: 2)]
        // 3 replaced 2, so 2 went live: 1 is older than that.
        let stale = freshness(history, live: 1)
        XCTAssertTrue(stale.isStale)
        XCTAssertEqual(stale.newestWentLive?.sequence, 2)
        XCTAssertEqual(stale.newestWentLive?.provenBy, 3)
        // 3 may never have gone live (its publish died before the manifest write).
        XCTAssertFalse(freshness(history, live: 2).isStale)
        XCTAssertFalse(freshness(history, live: 3).isStale)
        // Records from before `replaces` existed prove it with their rollback.
        let old = [record(4, replaces: nil), record(5, replaces: nil, rollback: 4), record(6, replaces: nil, rollback: 5)]
        XCTAssertTrue(freshness(old, live: 4).isStale)
        // A rollback record returns to an older release under a newer sequence: not stale.
        let rolledBack = history + [record(4, replaces: 3, rollback: 1)]
        XCTAssertFalse(freshness(rolledBack, live: 4).isStale)
        XCTAssertTrue(freshness(rolledBack, live: 2).isStale, "record 4 replaced 3")

        let log = CheckLog()
        stale.check(source: "DIR/manifest.json", log: log)
        XCTAssertEqual(log.checks.map(\.status), [.fail])
        XCTAssertTrue(log.checks[0].detail.hasPrefix("the live manifest is sequence 1, older than sequence 2, which went live (history record 3 replaced it)"), log.checks[0].detail)
    }
}
