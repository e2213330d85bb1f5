import Foundation
import ModelCastCore
import ModelCastTestSupport
import XCTest

/// `modelcast report` and serve's `/_modelcast/report` (issue 32): the release page of a
/// target with two channels, a rollback, a staged rollout on a schedule that was halted, a
/// signed manifest — and a hostile channel whose manifest and meta values carry markup.
final class ReleasePageTests: XCTestCase {
    /// The moment every page here describes (two days after the halt).
    static let at = "2026-09-28T12:00:00Z"
    static let golden = repositoryRoot + "/Tests/ModelCastEndToEndTests/Golden/report"

    /// The same target and moment give the same bytes, which are the golden files'; the
    /// JSON matches its schema.
    func testThePageIsDeterministicAndMatchesItsGoldenFiles() throws {
        let work = try Scratch()
        try ReleasePageTarget.make(in: work)
        let first = try report(["site", "--at", Self.at, "-o", "page.html"], cwd: work.path)
        XCTAssertEqual(first.stdout, "wrote page.html: 3 channels of site as of \(Self.at)\n")
        let html = try String(contentsOfFile: work.at("page.html"), encoding: .utf8)
        try report(["site", "--at", Self.at, "-o", "again.html"], cwd: work.path)
        XCTAssertEqual(try String(contentsOfFile: work.at("again.html"), encoding: .utf8), html, "the same target and moment must give the same page")
        try assertGolden(html, named: "release-page.html", in: Self.golden)
        let json = try report(["site", "--at", Self.at, "--json"], cwd: work.path).stdout
        try assertGolden(json, named: "release-page.json", in: Self.golden)
        try validateAgainstSchema([json], "report.schema.json")

        // Self-contained: nothing is fetched from anywhere, and no script runs.
        for outside in ["<script", "<link", "<img", "<iframe", "<object", "<embed", "@import", "url(", "href=\"http", "href=\"/"] {
            XCTAssertFalse(html.lowercased().contains(outside), "the page holds \(outside)")
        }
    }

    /// Issue 47: rollout steps made in quick succession (a script: 10 %, then 50 %, then
    /// 40 %, within one second) are each a step of the curve, as history lists them.
    func testEveryRolloutStepIsListedEvenWithinOneSecond() throws {
        let work = try Scratch()
        try work.write("a.bin", Array("model one\n".utf8))
        try work.write("b.bin", Array("model two\n".utf8))
        let environment = pinnedEnvironment(epoch: 1_790_000_000)
        let base = "https://cdn.example.com/m"
        for arguments in [["publish", "TinyClassifier=a.bin", "--version", "1.0.0", "--base-url", base, "--to", "site"],
                          ["publish", "TinyClassifier=b.bin", "--version", "1.1.0", "--base-url", base, "--to", "site", "--rollout", "10%"],
                          ["rollout", "site", "--percent", "50%"], ["rollout", "site", "--percent", "40%"]] {
            let result = try modelcast(arguments, cwd: work.path, environment: environment)
            XCTAssertEqual(result.status, 0, "\(arguments): \(result.stderr)")
        }
        let page = try JSONDecoder().decode(ReleasePage.self, from: Data(try report(["site", "--at", "2026-09-22T14:00:00Z", "--json"], cwd: work.path).stdout.utf8))
        let rollout = try XCTUnwrap(page.channels.first?.rollout)
        XCTAssertEqual(rollout.curve.map(\.percent), [10, 50, 40])
        let html = try report(["site", "--at", "2026-09-22T14:00:00Z", "-o", "-"], cwd: work.path).stdout
        let steps = html.components(separatedBy: "<ol class=\"steps\">").dropFirst().first?.components(separatedBy: "</ol>").first ?? ""
        XCTAssertEqual(steps.components(separatedBy: "<li>").count - 1, 3, steps)
    }

    /// What the page says of each channel, read back from its data.
    func testThePageShowsChannelsRolloutHistoryAndSignature() throws {
        let work = try Scratch()
        try ReleasePageTarget.make(in: work)
        let page = try JSONDecoder().decode(ReleasePage.self, from: Data(try report(["site", "--at", Self.at, "--json"], cwd: work.path).stdout.utf8))
        XCTAssertEqual(page.channels.map(\.name), ["stable", "beta", "evil"])
        let stable = page.channels[0]
        XCTAssertEqual(stable.live?.sequence, 5)
        XCTAssertEqual(stable.live?.models.map(\.version), ["3.0.0"])
        XCTAssertEqual(stable.live?.models.first?.files.first?.sha256, try digest(Data("detector v3\n".utf8)))
        let rollout = try XCTUnwrap(stable.rollout)
        XCTAssertEqual(rollout.state, .halted)
        XCTAssertEqual(rollout.percentNow, 0)
        XCTAssertEqual(rollout.fallbackSequence, 3)
        XCTAssertEqual(rollout.fallbackVersions, ["detector": "1.0.0"])
        // 5 % at the start, 25 % a day later by the schedule, 0 % at the halt.
        XCTAssertEqual(rollout.curve.map(\.percent), [5, 25, 0])
        XCTAssertEqual(rollout.curve.map(\.at), ["2026-09-24T14:13:20Z", "2026-09-25T14:13:20Z", "2026-09-26T14:13:20Z"])
        XCTAssertEqual(rollout.schedule?.map(\.percent), [5, 25, 50, 100])
        XCTAssertEqual(stable.history.map(\.action), [.rolloutHalt, .rollout, .rollback, .publish, .publish])
        XCTAssertEqual(stable.history[2].changes, ["detector 2.0.0 → 1.0.0"])
        XCTAssertEqual(stable.signature.state, .signed)
        XCTAssertEqual(stable.signature.keyID, ReleasePageTarget.keyID)
        XCTAssertEqual(stable.signature.signedSequence, 5)
        XCTAssertEqual(stable.signature.expiresAt, "2027-10-31T14:13:20Z")
        XCTAssertEqual(stable.signature.daysLeft, 398.0)

        let beta = page.channels[1]
        XCTAssertEqual(beta.live?.models.first?.version, "4.0.0-beta.1")
        XCTAssertEqual(beta.live?.models.first?.meta["description"], ReleasePageTarget.hostileMeta)
        XCTAssertNil(beta.rollout)
        XCTAssertEqual(beta.history.map(\.action), [.publish])

        // The hostile channel: its manifest reads as no release, and says why.
        let evil = page.channels[2]
        XCTAssertNil(evil.live)
        XCTAssertEqual(evil.signature.state, .unsigned)
        XCTAssertTrue(evil.notes.contains { $0.contains(ReleasePageTarget.hostileName) }, "\(evil.notes)")
    }

    /// Values from the target are text: the hostile model name and meta value appear in
    /// the page escaped, never as markup.
    func testHostileValuesAppearAsText() throws {
        let work = try Scratch()
        try ReleasePageTarget.make(in: work)
        let html = try report(["site", "--at", Self.at, "-o", "-"], cwd: work.path).stdout
        XCTAssertFalse(html.contains("<script"), "markup from the target reached the page")
        XCTAssertFalse(html.contains("<img"), "markup from the target reached the page")
        XCTAssertTrue(html.contains("&lt;script&gt;alert(&quot;modelcast&quot;)&lt;/script&gt;"), "the hostile name is not shown as text")
        XCTAssertTrue(html.contains("&lt;img src=x onerror=alert(1)&gt;"), "the hostile meta value is not shown as text")
        // A control character from the target is shown escaped, not raw.
        XCTAssertFalse(html.unicodeScalars.contains { $0.value == 0x1B }, "a raw escape character reached the page")
        XCTAssertTrue(html.contains("\\u{1B}[31m"), "the escape character is not shown")
    }

    /// `--verify` adds each channel's checks; the exit status is verify's (the hostile
    /// channel fails), and the signature panel says the signature check passed.
    func testVerifyAddsEachChecksOutcome() throws {
        let work = try Scratch()
        try ReleasePageTarget.make(in: work)
        let result = try modelcast(["report", "site", "--at", Self.at, "--json", "--verify", "--allow-http", "--public-key", ReleasePageTarget.publicKey], cwd: work.path)
        XCTAssertEqual(result.status, 1, "a channel failed verify: \(result.stderr)")
        let page = try JSONDecoder().decode(ReleasePage.self, from: Data(result.stdout.utf8))
        try validateAgainstSchema([result.stdout], "report.schema.json")
        let stable = page.channels[0]
        XCTAssertEqual(stable.verify?.passed, true, "\(stable.verify?.checks.filter { $0.status != .pass } ?? [])")
        XCTAssertTrue(stable.verify?.checks.contains { $0.check == "artifact.sha256" && $0.status == .pass } ?? false)
        XCTAssertEqual(stable.signature.checked, .pass)
        XCTAssertEqual(page.channels[2].verify?.passed, false)

        // Only the good channels: every check passes and the page says so.
        let good = try modelcast(["report", "site", "--at", Self.at, "--channel", "stable", "--verify", "--allow-http", "--public-key", ReleasePageTarget.publicKey, "-o", "ok.html"], cwd: work.path)
        XCTAssertEqual(good.status, 0, good.stderr)
        XCTAssertEqual(good.stdout, "wrote ok.html: 1 channel of site as of \(Self.at); verify passed\n")
        let html = try String(contentsOfFile: work.at("ok.html"), encoding: .utf8)
        XCTAssertTrue(html.contains("verify: pass"))

        // A tampered artifact fails its check on the page, and the command exits 1.
        try Data("tampered!!!!".utf8).write(to: URL(fileURLWithPath: work.at("site/models/detector/3.0.0/detector.bin")))
        let bad = try modelcast(["report", "site", "--at", Self.at, "--channel", "stable", "--verify", "--allow-http", "--json"], cwd: work.path)
        XCTAssertEqual(bad.status, 1)
        let badPage = try JSONDecoder().decode(ReleasePage.self, from: Data(bad.stdout.utf8))
        XCTAssertTrue(badPage.channels[0].verify?.checks.contains { $0.check == "artifact.sha256" && $0.status == .fail } ?? false)
    }

    /// serve shows the same page at /_modelcast/report (and its data at .json), made on
    /// request and never written into the directory; a manifest URL gives its channel's page.
    func testServeShowsThePageAndAURLGivesItsChannel() throws {
        let work = try Scratch()
        try ReleasePageTarget.make(in: work)
        let before = try snapshot(work.at("site"))
        let port = try freeLoopbackPort()
        let server = try BackgroundProcess(modelcastBinary, ["serve", "site", "--port", String(port)], cwd: work.path)
        XCTAssertEqual(server.firstLine, "http://127.0.0.1:\(port)/models")
        let origin = "http://127.0.0.1:\(port)"
        let page = try curl(origin + "/_modelcast/report", work)
        XCTAssertEqual(page.status, 200)
        XCTAssertEqual(page.headers["content-type"], "text/html; charset=utf-8")
        XCTAssertEqual(page.headers["cache-control"], "no-store")
        // The same bytes `report` writes for the same moment.
        let html = String(decoding: page.body, as: UTF8.self)
        let moment = try XCTUnwrap(html.range(of: #"<time datetime="([^"]+)">"#, options: .regularExpression).map { String(html[$0].dropFirst(16).dropLast(2)) })
        XCTAssertEqual(html, try report(["site", "--at", moment, "-o", "-"], cwd: work.path).stdout)
        let data = try curl(origin + "/_modelcast/report.json", work)
        XCTAssertEqual(data.headers["content-type"], "application/json")
        XCTAssertEqual(try JSONDecoder().decode(ReleasePage.self, from: data.body).channels.map(\.name), ["stable", "beta", "evil"])
        XCTAssertEqual(try curl(origin + "/_modelcast/report", work, method: "POST").status, 405)
        XCTAssertTrue(server.standardError.contains("release page: \(origin)/_modelcast/report"), server.standardError)

        // A manifest URL: its channel, and the history records the server serves.
        let url = try JSONDecoder().decode(ReleasePage.self, from: Data(try report(["\(origin)/models/manifest.json", "--at", Self.at, "--json"], cwd: work.path).stdout.utf8))
        XCTAssertEqual(url.channels.map(\.name), ["stable"])
        XCTAssertEqual(url.channels[0].history.map(\.sequence), [5, 4, 3, 2, 1])
        XCTAssertEqual(url.channels[0].rollout?.state, .halted)
        XCTAssertEqual(url.channels[0].signature.keyID, ReleasePageTarget.keyID)
        let beta = try JSONDecoder().decode(ReleasePage.self, from: Data(try report(["\(origin)/models/channels/beta/manifest.json", "--at", Self.at, "--json"], cwd: work.path).stdout.utf8))
        XCTAssertEqual(beta.channels.map(\.name), ["beta"])
        XCTAssertEqual(beta.channels[0].live?.sequence, 1)
        XCTAssertEqual(try snapshot(work.at("site")), before, "serve or report wrote into the published directory")
    }

    /// An s3:// target is read through the S3 API (moto, signatures checked): every
    /// channel, its rollout and history, and `--verify` through the store's checksums.
    /// The page never holds the credentials.
    func testAnS3TargetGivesEveryChannel() throws {
        let moto = try MotoS3()
        let work = try Scratch()
        let target = "s3://\(moto.bucket)/prod"
        func run(_ arguments: [String]) throws {
            let result = try modelcast(arguments, cwd: work.path, environment: moto.environment)
            XCTAssertEqual(result.status, 0, "\(arguments.joined(separator: " ")): \(result.stderr)")
        }
        let common = ["--to", target, "--base-url", "https://cdn.example.com/prod"]
        _ = try work.write("m.bin", text: "one\n")
        try run(["publish", "m.bin", "--version", "1.0.0"] + common)
        _ = try work.write("m.bin", text: "two\n")
        try run(["publish", "m.bin", "--version", "2.0.0", "--rollout", "10%"] + common)
        try run(["publish", "m.bin", "--version", "2.0.0", "--channel", "beta"] + common)
        let result = try modelcast(["report", target, "--verify", "--json"], cwd: work.path, environment: moto.environment)
        XCTAssertEqual(result.status, 0, result.stderr)
        try validateAgainstSchema([result.stdout], "report.schema.json")
        let page = try JSONDecoder().decode(ReleasePage.self, from: Data(result.stdout.utf8))
        XCTAssertEqual(page.target, target)
        XCTAssertEqual(page.channels.map(\.name), ["stable", "beta"])
        XCTAssertEqual(page.channels[0].rollout?.state, .inProgress)
        XCTAssertEqual(page.channels[0].rollout?.percentNow, 10)
        XCTAssertEqual(page.channels[0].history.map(\.sequence), [2, 1])
        XCTAssertEqual(page.channels[1].live?.models.first?.version, "2.0.0")
        XCTAssertEqual(page.channels.map { $0.verify?.passed }, [true, true])
        let html = try modelcast(["report", target, "-o", "-"], cwd: work.path, environment: moto.environment).stdout
        XCTAssertFalse(html.contains(moto.secretAccessKey), "the page holds the secret key")
        XCTAssertFalse(html.contains(moto.accessKeyID), "the page holds the access key id")
    }

    /// A model published with variants is one row per variant, each with what a device
    /// needs to take it, its version and its files.
    func testVariantsAreListedEachWithWhatItNeeds() throws {
        let work = try Scratch()
        _ = try work.write("a.bin", text: "big model")
        _ = try work.write("b.bin", text: "small")
        let published = try modelcast(["publish", "--name", "llm", "--version", "1.0.0", "--variant", "3b=a.bin", "--variant", "1b=b.bin",
                                       "--requires", "3b:min_memory=6GiB", "--to", "site", "--base-url", "https://cdn.example.com/m"], cwd: work.path)
        XCTAssertEqual(published.status, 0, published.stderr)
        let page = try JSONDecoder().decode(ReleasePage.self, from: Data(try report(["site", "--json"], cwd: work.path).stdout.utf8))
        let models = try XCTUnwrap(page.channels.first?.live?.models)
        XCTAssertEqual(models.map(\.variant), ["3b", "1b"], "in the manifest's order of preference")
        XCTAssertEqual(models.map(\.requires), ["min_memory=6.0 GiB", nil])
        XCTAssertEqual(models.map { $0.files.map(\.key) }, [["models/llm/variants/3b/1.0.0/a.bin"], ["models/llm/variants/1b/1.0.0/b.bin"]])
        XCTAssertEqual(page.channels.first?.live?.totalSize, 14)
        let html = try report(["site", "-o", "-"], cwd: work.path).stdout
        XCTAssertTrue(html.contains("variant 3b</span><br><span class=\"requires\">needs min_memory=6.0 GiB</span>"), html)
    }

    /// A hostile host behind a manifest URL: a manifest that is no release, a signature
    /// whose trusted comment claims sequence 2^63−1 (the highest Int64: counting on from it
    /// must not overflow), markup in its fields. The page is drawn, with what was wrong.
    func testAHostileHostGivesAPageNotACrash() throws {
        let work = try Scratch()
        let site = work.at("host")
        _ = try work.write("host/manifest.json", text: #"{"format":"<b>bold</b>","models":{}}"#)
        let structure = Data([0x45, 0x44] + [UInt8](repeating: 7, count: 72)).base64EncodedString()
        let global = Data([UInt8](repeating: 9, count: 64)).base64EncodedString()
        _ = try work.write("host/manifest.json.minisig", text: """
            untrusted comment: <script>x</script>
            \(structure)
            trusted comment: timestamp:1\tfile:manifest.json\tsequence:\(Int64.max)\tversion:<i>v</i>\texpires:never
            \(global)

            """)
        let port = try freeLoopbackPort()
        let server = try BackgroundProcess("/usr/bin/env", ["python3", "-u", "-c", """
            import http.server, functools, sys
            handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
            server = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), handler)
            print("ready", flush=True)
            server.serve_forever()
            """, site, String(port)])
        XCTAssertEqual(server.firstLine, "ready")
        let url = "http://127.0.0.1:\(port)/manifest.json"
        let result = try modelcast(["report", url, "--json", "--at", Self.at], cwd: work.path)
        XCTAssertEqual(result.status, 0, result.stderr)
        let page = try JSONDecoder().decode(ReleasePage.self, from: Data(result.stdout.utf8))
        XCTAssertNil(page.channels[0].live)
        XCTAssertEqual(page.channels[0].signature.signedSequence, Int64.max)
        XCTAssertTrue(page.channels[0].notes.contains { $0.contains("cannot be read as a modelcast release") }, "\(page.channels[0].notes)")
        let html = try modelcast(["report", url, "-o", "-", "--at", Self.at], cwd: work.path)
        XCTAssertEqual(html.status, 0, html.stderr)
        XCTAssertFalse(html.stdout.contains("<b>") || html.stdout.contains("<i>") || html.stdout.contains("<script"), "markup from the host reached the page")
        XCTAssertTrue(html.stdout.contains("&lt;b&gt;bold&lt;/b&gt;"), "the hostile format value is not shown as text")
        // A host that answers 404 for the manifest: nothing is published there (refused, 1), named.
        let missing = "http://127.0.0.1:\(port)/nothing/manifest.json"
        let absent = try modelcast(["report", missing, "--json", "--at", Self.at], cwd: work.path)
        XCTAssertEqual(absent.status, 1, absent.stderr)
        XCTAssertTrue(absent.stderr.contains("no manifest at \(missing): nothing is published there"), absent.stderr)
    }

    /// Each bad source or flag is named, with its exit status, and nothing is written.
    func testBadInputIsNamed() throws {
        let work = try Scratch()
        _ = try work.write("file.txt", text: "not a target")
        _ = try work.mkdir("empty")
        _ = try work.write("m.bin", text: "model\n")
        let published = try modelcast(["publish", "m.bin", "--version", "1.0.0", "--to", "site", "--base-url", "https://cdn.example.com/m"], cwd: work.path)
        XCTAssertEqual(published.status, 0, published.stderr)
        let cases: [([String], Int32, String)] = [
            (["file.txt"], 1, "file.txt is a file: report reads a published directory, s3://bucket/prefix or a manifest URL"),
            (["empty"], 1, "nothing is published at empty"),
            (["empty", "--at", "yesterday"], 2, "--at 'yesterday' is neither an RFC 3339 time"),
            (["empty", "--public-key", "k.pub"], 2, "--public-key goes with --verify"),
            (["empty", "--channel", "Beta!"], 1, "channel 'Beta!'"),
            (["gs://bucket/models"], 1, "did you mean s3://bucket/models?"),
            (["http://"], 1, "'http://' is not a manifest URL"),
            (["http://127.0.0.1:9/models/"], 1, "'http://127.0.0.1:9/models/' names no manifest"),
            (["site", "-o", "nowhere/page.html"], 3, "nowhere/page.html"),
            (["site", "--channel", "beta"], 1, "site has no channel 'beta': its channels are stable"),
        ]
        for (arguments, status, message) in cases {
            let result = try modelcast(["report"] + arguments, cwd: work.path)
            XCTAssertEqual(result.status, status, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            XCTAssertEqual(result.stdout, "", "\(arguments)")
        }
        XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: work.path)), ["file.txt", "empty", "m.bin", "site"], "a failed report wrote a file")
    }

    @discardableResult
    private func report(_ arguments: [String], cwd: String, file: StaticString = #filePath, line: UInt = #line) throws -> ProcessOutput {
        let result = try modelcast(["report"] + arguments, cwd: cwd)
        XCTAssertEqual(result.status, 0, "report \(arguments.joined(separator: " ")): \(result.stderr)", file: file, line: line)
        return result
    }

    private func curl(_ url: String, _ work: Scratch, method: String = "GET") throws -> (status: Int, headers: [String: String], body: Data) {
        let bodyFile = work.at("body-\(UUID().uuidString)")
        let result = try runProcess("/usr/bin/env", ["curl", "-sS", "--http1.1", "-D", "-", "-o", bodyFile, "-X", method, url])
        XCTAssertEqual(result.status, 0, "curl \(url): \(result.stderr)")
        var status = 0
        var headers: [String: String] = [:]
        for line in result.stdout.split(separator: "\r\n") {
            if line.hasPrefix("HTTP/") { status = Int(line.split(separator: " ")[1]) ?? 0; continue }
            if let colon = line.firstIndex(of: ":") { headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces) }
        }
        let body = (try? Data(contentsOf: URL(fileURLWithPath: bodyFile))) ?? Data()
        try? FileManager.default.removeItem(atPath: bodyFile)
        return (status, headers, body)
    }

    private func digest(_ data: Data) throws -> String { try SHA256Hasher.digest(data).hex }
}

/// The target the release page tests draw: built by the real commands with the clock
/// pinned at each step and a fixed test-only signing key, so it is the same on every run.
enum ReleasePageTarget {
    static let secretKey = repositoryRoot + "/Tests/Fixtures/report/test-only.key"
    static let publicKey = repositoryRoot + "/Tests/Fixtures/report/test-only.pub"
    static let keyID = "CE46A92E5BADE77B"
    static let hostileName = #"<script>alert("modelcast")</script>"#
    static let hostileMeta = "<img src=x onerror=alert(1)>"

    /// In `work/site`, base URL `http://127.0.0.1:8080/models` (serve's path):
    /// - stable: 1.0.0, 2.0.0, a rollback to 1.0.0, 3.0.0 on a schedule (5 %, 25 % a day
    ///   later, 50 %, 100 %), halted two days in; every release signed, valid 400 days;
    /// - beta: 4.0.0-beta.1 with a meta value holding markup and an escape character;
    /// - evil: a hand-written manifest naming a model `<script>…`.
    static func make(in work: Scratch) throws {
        let day = 86_400
        let epoch = 1_790_000_000
        let base = ["--to", "site", "--base-url", "http://127.0.0.1:8080/models", "--sign", secretKey]
        func run(_ arguments: [String], at offset: Int) throws {
            let result = try modelcast(arguments, cwd: work.path, environment: pinnedEnvironment(epoch: epoch + offset))
            XCTAssertEqual(result.status, 0, "\(arguments.joined(separator: " ")): \(result.stderr)")
        }
        func model(_ text: String) throws -> String { try work.write("detector.bin", text: text) }
        _ = try model("detector v1\n")
        try run(["publish", "detector.bin", "--version", "1.0.0", "--expires-in", "400d"] + base, at: 0)
        _ = try model("detector v2\n")
        try run(["publish", "detector.bin", "--version", "2.0.0", "--expires-in", "400d"] + base, at: day)
        try run(["rollback", "site", "--version", "1.0.0", "--sign", secretKey], at: 2 * day)
        _ = try model("detector v3\n")
        try run(["publish", "detector.bin", "--version", "3.0.0", "--expires-in", "400d", "--rollout-schedule", "5%,25%@24h,50%@72h,100%@7d"] + base, at: 3 * day)
        _ = try work.write("beta.bin", text: "detector beta\n")
        try run(["publish", "detector=beta.bin", "--version", "4.0.0-beta.1", "--channel", "beta", "--expires-in", "400d",
                 "--meta", "description=\(hostileMeta)", "--meta", "notes=red \u{1B}[31m text"] + base, at: 4 * day)
        try run(["rollout", "site", "--halt", "--sign", secretKey], at: 5 * day)
        // stable's manifest, its model renamed: every other field is a good one.
        var manifest = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: work.at("site/manifest.json")))) as? [String: Any])
        var models = try XCTUnwrap(manifest["models"] as? [String: Any])
        models[hostileName] = models.removeValue(forKey: "detector")
        manifest["models"] = models
        manifest["channel"] = "evil"
        let evil = String(decoding: try JSONSerialization.data(withJSONObject: manifest, options: [.sortedKeys]), as: UTF8.self)
        _ = try work.write("site/channels/evil/manifest.json", text: evil)
    }
}
