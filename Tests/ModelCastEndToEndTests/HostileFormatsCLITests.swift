import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// Crafted models and archives through the binary (issue #11): they must be refused with
/// an error naming the offending field, never crash the process, and never pass verify.
final class HostileFormatsCLITests: XCTestCase {
    var environment: [String: String] {
        let environment = pinnedEnvironment()
        return environment
    }

    /// A runtime trap prints this on stderr (and the process dies of SIGILL, shown as exit 132 by a shell).
    func assertNoTrap(_ result: ProcessOutput, _ context: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(result.stderr.contains("Swift runtime failure"), "\(context): \(result.stderr)", file: file, line: line)
        XCTAssertFalse(result.stderr.contains("Fatal error"), "\(context): \(result.stderr)", file: file, line: line)
        XCTAssertFalse([4, 5, 6, 11, 132, 133, 134, 139].contains(result.status), "\(context): status \(result.status)", file: file, line: line)
    }

    // MARK: - Item 1: overflowing GGUF offsets

    func testInspectAndPublishRefuseATensorOffsetThatOverflows() throws {
        let work = try Scratch()
        var builder = GGUFBuilder()
        builder.addString("general.architecture", "llama")
        builder.addString("general.name", "hostile")
        builder.tensors = [
            ("output_norm.weight", [64], 0, 0),
            ("token_embd.weight", [64, 2], 8, 0xFFFF_FFFF_FFFF_FFE0),
        ]
        builder.dataBytes = 256 + 136
        let model = try work.write("hostile.gguf", builder.build())
        let expected = "invalid GGUF model \(model): tensor token_embd.weight: offset 18446744073709551584"

        let inspect = try modelcast(["inspect", model])
        assertNoTrap(inspect, "inspect")
        XCTAssertNotEqual(inspect.status, 0)
        XCTAssertEqual(inspect.stdout, "")
        XCTAssertTrue(inspect.stderr.contains(expected), inspect.stderr)
        XCTAssertTrue(inspect.stderr.contains("overflows"), inspect.stderr)

        let publish = try modelcast(["publish", model, "--version", "1.0.0", "--base-url", "https://cdn.example.com/m", "--to", work.at("site")], environment: environment)
        assertNoTrap(publish, "publish")
        XCTAssertNotEqual(publish.status, 0)
        XCTAssertTrue(publish.stderr.contains(expected), publish.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: work.at("site/manifest.json")), "nothing published")

        let pack = try modelcast(["pack", model, "-o", work.at("out/")])
        assertNoTrap(pack, "pack")
        XCTAssertNotEqual(pack.status, 0)
        XCTAssertTrue(pack.stderr.contains(expected), pack.stderr)
    }

    /// Names inside a GGUF are untrusted text: shown by inspect or in an error, their
    /// control characters are escaped, so a model cannot drive the user's terminal.
    func testGGUFNamesWithControlCharactersAreEscapedInOutputAndErrors() throws {
        let work = try Scratch()
        var builder = GGUFBuilder()
        builder.addString("general.architecture", "llama")
        builder.addString("general.name", "evil\u{1B}]0;pwned\u{07}\u{1B}[2J")
        builder.tensors = [("norm", [8], 0, 0)]
        builder.dataBytes = 32
        let named = try work.write("named.gguf", builder.build())
        let inspect = try modelcast(["inspect", named])
        XCTAssertEqual(inspect.status, 0, inspect.stderr)
        XCTAssertFalse(inspect.stdout.contains("\u{1B}") || inspect.stdout.contains("\u{07}"), inspect.stdout.debugDescription)
        XCTAssertTrue(inspect.stdout.contains(#"evil\u{1B}]0;pwned\u{7}\u{1B}[2J"#), inspect.stdout)

        builder.tensors = [("tok\u{1B}[31m", [8], 0, 0xFFFF_FFFF_FFFF_FFE0)]
        let broken = try work.write("broken.gguf", builder.build())
        let refused = try modelcast(["inspect", broken])
        assertNoTrap(refused, "inspect")
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertFalse(refused.stderr.contains("\u{1B}"), refused.stderr.debugDescription)
        XCTAssertTrue(refused.stderr.contains(#"tensor tok\u{1B}[31m: offset 18446744073709551584"#), refused.stderr)
    }

    // MARK: - Item 3: local headers that disagree with the central directory

    /// Publishes `zip` (a file model, stored as it is) to `site` under `base`.
    func publish(_ zip: String, to site: String, base: String) throws {
        try PublishRun([zip], version: "1.0.0", baseURL: base, to: site, environment: environment).succeeds()
    }

    func testVerifyRefusesAZipWhoseLocalHeaderDisagreesWithTheCentralDirectory() throws {
        let work = try Scratch()
        let zip = work.at("model.zip")
        // weights.bin is stored (method 0); its local header is patched to say deflate (8).
        try shell(#"python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1], "w"); z.writestr("Model/config.json", "{}"); z.writestr("Model/weights.bin", bytes(range(256)) * 4); z.close()' '\#(zip)'"#)
        let clean = Array(try Data(contentsOf: URL(fileURLWithPath: zip)))
        var bytes = clean
        let header = 30 + "Model/config.json".utf8.count + 2  // the second local header
        XCTAssertEqual(Array(bytes[header..<(header + 4)]), [0x50, 0x4b, 0x03, 0x04])
        XCTAssertEqual(bytes[header + 8], 0)
        bytes[header + 8] = 8
        try Data(bytes).write(to: URL(fileURLWithPath: zip))
        XCTAssertNotEqual(try runProcess("/usr/bin/env", ["unzip", "-t", zip]).status, 0, "unzip -t must reject it too")

        let base = "https://cdn.example.com/ml"
        try publish(zip, to: work.at("site"), base: base)
        let expected = #"entry "Model/weights.bin": local header at offset \#(header) says compression method 8, the central directory says 0"#
        let (result, report) = try verifyJSON([work.at("site")])
        XCTAssertEqual(result.status, 1, result.stdout + result.stderr)
        let failures = report?.checks.filter { $0.check == "artifact.zip" && $0.status == .fail } ?? []
        XCTAssertEqual(failures.map(\.detail), ["m 1.0.0/model.zip: " + expected], result.stdout)
        let text = try modelcast(["verify", work.at("site")])
        XCTAssertEqual(text.status, 1)
        XCTAssertTrue(text.stdout.contains("FAIL  artifact.zip"), text.stdout)
        XCTAssertFalse(text.stdout.contains("no unsafe entries"), text.stdout)

        // The same site served over HTTP: the local headers are read with Range requests.
        let port = try freeLoopbackPort()
        let served = "http://127.0.0.1:\(port)/ml"
        try publish(zip, to: work.at("served"), base: served)
        let server = try BackgroundProcess(modelcastBinary, ["serve", work.at("served"), "--port", String(port)])
        XCTAssertEqual(server.firstLine, served)
        let (httpResult, httpReport) = try verifyJSON([served + "/manifest.json", "--allow-http"])
        XCTAssertEqual(httpResult.status, 1, httpResult.stdout + httpResult.stderr)
        let httpFailures = httpReport?.checks.filter { $0.check == "artifact.zip" && $0.status == .fail } ?? []
        XCTAssertEqual(httpFailures.map(\.detail), ["m 1.0.0/model.zip: " + expected], httpResult.stdout)

        // The untouched archive passes.
        try Data(clean).write(to: URL(fileURLWithPath: zip))
        try publish(zip, to: work.at("clean"), base: base)
        let (cleanResult, cleanReport) = try verifyJSON([work.at("clean")])
        XCTAssertEqual(cleanResult.status, 0, cleanResult.stdout)
        XCTAssertEqual(cleanReport?.checks.first { $0.check == "artifact.zip" }?.status, .pass)
    }

    // MARK: - Item 4: the entry-count cap

    func testVerifyCapsTheZipEntryCountAndTheFlagRaisesIt() throws {
        let work = try Scratch()
        let zip = work.at("many.zip")
        try shell(#"python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1], "w"); [z.writestr(zipfile.ZipInfo(f"e/{i:06}"), b"") for i in range(100001)]; z.close()' '\#(zip)'"#)
        try publish(zip, to: work.at("site"), base: "https://cdn.example.com/ml")

        let (refused, report) = try verifyJSON([work.at("site")])
        XCTAssertEqual(refused.status, 1, refused.stdout + refused.stderr)
        let failure = try XCTUnwrap(report?.checks.first { $0.check == "artifact.zip" }, refused.stdout)
        XCTAssertEqual(failure.status, .fail)
        XCTAssertTrue(failure.detail.contains("end of central directory declares 100001 entries, more than the limit of 100000"), failure.detail)
        XCTAssertTrue(failure.detail.contains("--max-zip-entries"), "the message says how to raise the cap: \(failure.detail)")

        let (raised, raisedReport) = try verifyJSON([work.at("site"), "--max-zip-entries", "100001"])
        XCTAssertEqual(raised.status, 0, raised.stdout + raised.stderr)
        let pass = try XCTUnwrap(raisedReport?.checks.first { $0.check == "artifact.zip" })
        XCTAssertEqual(pass.status, .pass)
        XCTAssertTrue(pass.detail.contains("100001 entries"), pass.detail)

        let invalid = try modelcast(["verify", work.at("site"), "--max-zip-entries", "0"])
        XCTAssertNotEqual(invalid.status, 0, invalid.stderr)
        XCTAssertTrue(invalid.stderr.contains("--max-zip-entries"), invalid.stderr)
        let help = try modelcast(["verify", "--help"])
        XCTAssertTrue(help.stdout.contains("--max-zip-entries"), help.stdout)
        XCTAssertTrue(help.stdout.contains("100000"), help.stdout)
    }

    // MARK: - Issue 23: manifest values the client refuses, verify refuses too

    /// `verify DIR` and `verify URL` apply the validation devices apply (one
    /// `Release.validate`): a served manifest whose digest is a path, or whose model name
    /// climbs out, fails with the field's JSON path named, and nothing crashes.
    func testVerifyRefusesManifestValuesTheClientRefuses() throws {
        let work = try Scratch()
        let published = try modelcast(["publish", try work.write("m.bin", patternBytes(2000, seed: 1)), "--name", "m", "--version", "1.0.0",
                                       "--base-url", "https://cdn.example.com/m", "--to", work.at("site")], environment: environment)
        XCTAssertEqual(published.status, 0, published.stderr)
        let manifest = work.at("site/manifest.json")
        let good = try String(contentsOfFile: manifest, encoding: .utf8)
        let sha = try XCTUnwrap(good.range(of: #"[0-9a-f]{64}"#, options: .regularExpression).map { String(good[$0]) })
        let cases: [(String, String, String)] = [
            ("a digest that is a path", good.replacingOccurrences(of: sha, with: "../../canary"), "models.m.files[0].sha256: '../../canary' is not a SHA-256 digest"),
            ("an uppercase digest", good.replacingOccurrences(of: sha, with: sha.uppercased()), "models.m.files[0].sha256"),
            ("a name climbing out", good.replacingOccurrences(of: "\"m\": {", with: "\"../../victim\": {"), "models.['../../victim']: '../../victim' is not a model name"),
        ]
        for (label, text, expected) in cases {
            XCTAssertNotEqual(text, good, label)
            try text.write(toFile: manifest, atomically: true, encoding: .utf8)
            let verify = try modelcast(["verify", work.at("site")])
            assertNoTrap(verify, label)
            XCTAssertEqual(verify.status, 1, "\(label): \(verify.stdout)\(verify.stderr)")
            XCTAssertTrue((verify.stdout + verify.stderr).contains(expected), "\(label): \(verify.stdout)\(verify.stderr)")
        }
    }

    // MARK: - Issue 24 item 5: terminal and hosting-file injection

    /// What a command prints never holds a raw control character: a served manifest whose
    /// values carry escape sequences (clear screen, set the window title) is reported
    /// with them escaped, in text and in `--json` (which stays valid JSON).
    func testNoControlCharacterReachesTheTerminal() throws {
        let work = try Scratch()
        let hostile = #"\u001b]0;owned\u0007\u001b[2J\r\u009b31m\u202e"#
        let sha = String(repeating: "a", count: 64)
        let manifests = [
            ("catalog", "{\"models\": {\"m\(hostile)\": {\"version\": \"1.0.0\(hostile)\", \"url\": \"https://cdn.example.com/m/m.bin\", \"checksum\": \"sha256:\(sha)\", \"size\": 1, \"minAppVersion\": \"1.0\(hostile)\"}}, \"minAppVersion\": \"1\(hostile)\"}"),
            ("tiers", "{\"current_version\": \"1.0\(hostile)\", \"models\": {\"t\(hostile)\": {\"url\": \"https://cdn.example.com/m/m.bin\", \"size_bytes\": 1, \"sha256\": \"\(sha)\", \"min_app_version\": \"1\(hostile)\", \"release_notes\": \"x\(hostile)\"}}, \"rollback_version\": \"0.9\(hostile)\"}"),
            ("nomlens", "{\"version\": \"1\(hostile)\", \"url\": \"https://cdn.example.com/m/m\(hostile).bin\", \"sha256\": \"\(sha)\", \"num_classes\": 3, \"class_list_version\": \"v\(hostile)\", \"training_date\": \"2026\(hostile)\", \"size_mb\": 1}"),
            ("modelcast", "{\"format\": \"modelcast-manifest\", \"format_version\": 1, \"sequence\": 1, \"published_at\": \"2026-11-20T00:00:00Z\", \"channel\": \"stable\", \"models\": {\"m\(hostile)\": {}}}"),
        ]
        func raw(_ text: String) -> [Unicode.Scalar] {
            text.unicodeScalars.filter { ($0.value < 0x20 && $0 != "\n" && $0 != "\t") || (0x7F...0x9F).contains($0.value) || $0 == "\u{202E}" }
        }
        for (profile, text) in manifests {
            let site = try work.mkdir("site-\(profile)")
            try text.write(toFile: site + "/manifest.json", atomically: true, encoding: .utf8)
            for json in [false, true] {
                let verify = try modelcast(["verify", site, "--base-url", "https://cdn.example.com/m"] + (json ? ["--json"] : []))
                assertNoTrap(verify, profile)
                XCTAssertNotEqual(verify.status, 0, "\(profile): \(verify.stdout)")
                XCTAssertEqual(raw(verify.stdout), [], "\(profile): raw control characters on standard output: \(verify.stdout.debugDescription)")
                XCTAssertEqual(raw(verify.stderr), [], "\(profile): raw control characters on standard error: \(verify.stderr.debugDescription)")
                if json { XCTAssertNoThrow(try JSONSerialization.jsonObject(with: Data(verify.stdout.utf8)), "\(profile): \(verify.stdout)") }
            }
        }
    }

    /// A base URL with a line feed (or a space, or a control character) is refused, so it
    /// never splits a line of `_headers` or nginx.conf; the error shows it escaped.
    func testABaseURLThatWouldSplitAHostingFileIsRefused() throws {
        let work = try Scratch()
        for base in ["https://x.example/a\nb", "https://x.example/a b", "https://x.example/a\u{1B}[2J", "https://x.example/\u{E9}"] {
            let publish = try modelcast(["publish", "examples/models/tiny-llm.gguf", "--version", "1.0.0", "--base-url", base, "--to", work.at("site")], environment: environment)
            assertNoTrap(publish, base)
            XCTAssertEqual(publish.status, 1, publish.stderr)
            XCTAssertTrue(publish.stderr.contains("contains a space, a control character or a non-ASCII character"), publish.stderr)
            XCTAssertFalse(publish.stderr.unicodeScalars.contains { $0.value == 0x1B }, publish.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: work.at("site")), "nothing written for \(base.debugDescription)")
        }
    }

    /// Issue 44 item 6: a base URL holding a character no URL may hold unencoded (RFC 3986),
    /// which nginx.conf or `_headers` would read as syntax, is refused naming the character
    /// and its place, before anything is written.
    func testABaseURLHoldingWhatNoURLMayHoldIsRefusedNamingIt() throws {
        let work = try Scratch()
        // "https://x.example/a" is 19 characters: the character tried is the 20th.
        let cases: [(String, String)] = [
            ("{", "'{' at character 20, which no URL may hold unencoded (RFC 3986)"), ("}", "'}' at character 20"),
            ("\"", "'\"' at character 20"), ("\\", "'\\' at character 20"), ("`", "'`' at character 20, which no URL may hold unencoded"),
            ("<", "'<' at character 20"), (">", "'>' at character 20"), ("^", "'^' at character 20"), ("|", "'|' at character 20"),
            ("[", "'[' at character 20"), ("]", "']' at character 20"), ("%zz", "'%' at character 20, which does not start a percent-encoded byte"),
            ("*", "'*' at character 20 in its path, which _headers (Cloudflare Pages, Netlify) reads as a wildcard"),
            (":x", "':' at character 20 in its path, which _headers (Cloudflare Pages, Netlify) reads as a placeholder"),
        ]
        for (inserted, expected) in cases {
            let base = "https://x.example/a" + inserted + "b"
            let publish = try modelcast(["publish", "examples/models/tiny-llm.gguf", "--version", "1.0.0", "--base-url", base, "--to", work.at("site")], environment: environment)
            XCTAssertEqual(publish.status, 1, "\(base): \(publish.stderr)")
            XCTAssertTrue(publish.stderr.contains("base URL '\(base)' holds \(expected)"), "\(base): \(publish.stderr)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: work.at("site")), "nothing written for \(base)")
        }
        // What RFC 3986 allows stays allowed: sub-delimiters in the path, an IP literal and a port.
        for base in ["https://x.example/a;b'c$d(e)!f,g=h&i+j@k~l%20m", "http://[::1]:8080/m"] {
            let publish = try modelcast(["publish", "examples/models/tiny-llm.gguf", "--version", "1.0.0", "--base-url", base, "--to", work.at("ok"), "--dry-run"], environment: environment)
            XCTAssertEqual(publish.status, 0, "\(base): \(publish.stderr)")
        }
    }

    // MARK: - Issue 24 item 10: credentials in URLs

    /// A password given in any URL (an endpoint, a base URL, a URL to verify) never
    /// appears in what a failing command prints, in text or in the `--json` error object.
    func testAPasswordInAnyURLIsNeverEchoed() throws {
        let work = try Scratch()
        let secret = "supersecret-4711"
        var environment = self.environment
        environment["AWS_ACCESS_KEY_ID"] = "AKIAEXAMPLEEXAMPLE"
        environment["AWS_SECRET_ACCESS_KEY"] = "not-the-secret-we-grep-for"
        environment["AWS_REGION"] = "us-east-1"
        let gguf = "examples/models/tiny-llm.gguf"
        let runs: [[String]] = [
            ["publish", gguf, "--version", "1.0.0", "--base-url", "https://cdn.example.com/m", "--to", "s3://bucket/p", "--endpoint", "http://AKIA:\(secret)@127.0.0.1:9"],
            ["publish", gguf, "--version", "1.0.0", "--base-url", "https://user:\(secret)@cdn.example.com/m", "--to", work.at("site")],
            ["verify", "http://user:\(secret)@127.0.0.1:9/manifest.json"],
            ["verify", "s3://bucket/p", "--endpoint", "https://u:\(secret)@127.0.0.1:9"],
        ]
        for arguments in runs {
            for json in [false, true] {
                let result = try modelcast(arguments + (json ? ["--json"] : []), environment: environment)
                assertNoTrap(result, arguments.joined(separator: " "))
                XCTAssertNotEqual(result.status, 0, "\(arguments): \(result.stdout)")
                XCTAssertFalse((result.stdout + result.stderr).contains(secret), "\(arguments): \(result.stdout)\(result.stderr)")
                XCTAssertTrue((result.stdout + result.stderr).contains("<redacted>@"), "\(arguments): \(result.stdout)\(result.stderr)")
            }
        }
    }
}
