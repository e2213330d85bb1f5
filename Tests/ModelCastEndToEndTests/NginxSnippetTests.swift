import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// Serves a published directory through a real nginx (on 127.0.0.1) with the
/// generated snippet, and checks the headers a device would get.
final class NginxSnippetTests: XCTestCase {
    var work: Scratch?

    /// HTTP response headers (lower-cased names) and the body's SHA-256, via curl.
    func fetch(_ url: String, headers: [String] = []) throws -> (status: Int, headers: [String: String], sha256: String, size: Int) {
        let body = work!.at("body-\(UUID().uuidString)")
        var arguments = ["-sS", "-D", "-", "-o", body, url]
        for header in headers { arguments += ["-H", header] }
        let result = try runProcess("/usr/bin/env", ["curl"] + arguments)
        XCTAssertEqual(result.status, 0, result.stderr)
        var status = 0
        var fields: [String: String] = [:]
        for line in result.stdout.split(separator: "\r\n") {
            if line.hasPrefix("HTTP/") { status = Int(line.split(separator: " ")[1]) ?? 0; continue }
            if let colon = line.firstIndex(of: ":") {
                fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        let data = (try? Data(contentsOf: URL(fileURLWithPath: body))) ?? Data()
        return (status, fields, try SHA256Hasher.digest(data).hex, data.count)
    }

    func testGeneratedSnippetServesTheHeadersDevicesNeed() throws {
        guard let nginxBinary = NginxServer.binary else {
            throw XCTSkip("nginx is not installed (scripts/setup installs it)")
        }
        let work = try Scratch("modelcast-nginx")
        self.work = work
        let port = try freeLoopbackPort()
        let base = "http://127.0.0.1:\(port)/ml"
        let site = work.at("site")
        let environment = pinnedEnvironment()
        let keys = try modelcast(["keygen", "--unencrypted", "--public-key", work.at("k.pub"), "--secret-key", work.at("k.key")])
        XCTAssertEqual(keys.status, 0, keys.stderr)
        for (model, version) in [("examples/models/tiny-llm.gguf", "1.0.0"), ("examples/models/TinyClassifier.mlpackage", "1.1.0")] {
            let result = try modelcast(["publish", model, "--name", "m", "--version", version, "--base-url", base, "--to", site, "--sign", work.at("k.key"),
                                        "--interface-change", "--min-app-version", version], environment: environment)
            XCTAssertEqual(result.status, 0, result.stderr)
        }
        // A second channel: the snippet serves its manifest and signature too.
        let beta = try modelcast(["publish", "examples/models/retrained/TinyClassifier.mlpackage", "--name", "m", "--version", "1.2.0", "--channel", "beta",
                                  "--base-url", base, "--to", site, "--sign", work.at("k.key")], environment: environment)
        XCTAssertEqual(beta.status, 0, beta.stderr)
        let server = try NginxServer(binary: nginxBinary, site: site, port: port, work: work, probe: base + "/manifest.json")
        defer { withExtendedLifetime(server) {} }

        let live = try Release.decode(Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json")), source: "manifest")
        // The manifest: fresh on every request, JSON, byte-identical even to a client asking for gzip.
        let manifest = try fetch(base + "/manifest.json", headers: ["Accept-Encoding: gzip"])
        XCTAssertEqual(manifest.status, 200)
        XCTAssertEqual(manifest.headers["cache-control"], "no-cache, no-store")
        XCTAssertEqual(manifest.headers["content-type"], "application/json")
        XCTAssertNil(manifest.headers["content-encoding"])
        XCTAssertEqual(manifest.sha256, try SHA256Hasher.digest(Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json"))).hex)

        // Artifacts, current and rollback: immutable, right type and length, never re-encoded, ranges honoured.
        for file in live.models["m"]!.files + live.rollback!.models["m"]!.files {
            let response = try fetch(file.url, headers: ["Accept-Encoding: gzip"])
            XCTAssertEqual(response.status, 200, file.url)
            XCTAssertEqual(response.headers["cache-control"], "public, max-age=31536000, immutable", file.url)
            XCTAssertEqual(response.headers["content-type"], file.contentType, file.url)
            XCTAssertEqual(response.headers["content-length"], String(file.size), file.url)
            XCTAssertNil(response.headers["content-encoding"], file.url)
            XCTAssertEqual(response.sha256, file.sha256, file.url)
            let range = try fetch(file.url, headers: ["Range: bytes=0-9"])
            XCTAssertEqual(range.status, 206, file.url)
            XCTAssertEqual(range.size, 10)
        }
        XCTAssertEqual(live.models["m"]!.files[0].contentType, "application/zip")

        // The signature: revalidated like the manifest, and what minisign and verify accept.
        let signature = try fetch(base + "/manifest.json.minisig", headers: ["Accept-Encoding: gzip"])
        XCTAssertEqual(signature.status, 200)
        XCTAssertEqual(signature.headers["cache-control"], "no-cache, no-store")
        XCTAssertEqual(signature.headers["content-type"], "text/plain")
        XCTAssertNil(signature.headers["content-encoding"])
        XCTAssertEqual(signature.sha256, try SHA256Hasher.digest(Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json.minisig"))).hex)
        let verify = try modelcast(["verify", base + "/manifest.json", "--allow-http", "--public-key", work.at("k.pub")])
        XCTAssertEqual(verify.status, 0, verify.stdout)
        XCTAssertTrue(verify.stdout.contains("PASS  manifest.signature"), verify.stdout)

        for key in ["channels/beta/manifest.json", "channels/beta/manifest.json.minisig"] {
            let response = try fetch(base + "/" + key, headers: ["Accept-Encoding: gzip"])
            XCTAssertEqual(response.status, 200, key)
            XCTAssertEqual(response.headers["cache-control"], "no-cache, no-store", key)
            XCTAssertNil(response.headers["content-encoding"], key)
            XCTAssertEqual(response.sha256, try SHA256Hasher.digest(Data(contentsOf: URL(fileURLWithPath: site + "/" + key))).hex, key)
        }
        let betaVerify = try modelcast(["verify", base + "/channels/beta/manifest.json", "--allow-http", "--public-key", work.at("k.pub")])
        XCTAssertEqual(betaVerify.status, 0, betaVerify.stdout)

        let history = try fetch(base + "/manifests/00000001.json")
        XCTAssertEqual(history.status, 200)
        XCTAssertEqual(history.headers["content-type"], "application/json")
        XCTAssertEqual(history.headers["cache-control"], "public, max-age=31536000, immutable")
    }

    /// nginx's validators are the file's mtime (one-second resolution) and size: a manifest
    /// replaced within the second by one of the same size would get the same ETag and
    /// Last-Modified, and a device (or a CDN) revalidating would be told 304 and miss the
    /// release — a rollback right after a bad publish, say. The snippet gives manifests no
    /// validator, so every check gets the current bytes (a few KB).
    func testAManifestReplacedWithinTheSecondIsNeverAnswered304() throws {
        guard let nginxBinary = NginxServer.binary else {
            throw XCTSkip("nginx is not installed (scripts/setup installs it)")
        }
        let work = try Scratch("modelcast-nginx-304")
        self.work = work
        let port = try freeLoopbackPort()
        let base = "http://127.0.0.1:\(port)/ml"
        let site = work.at("site")
        let v1 = try work.write("v1/m.bin", patternBytes(1000, seed: 1))
        let v2 = try work.write("v2/m.bin", patternBytes(1000, seed: 2))
        let v3 = try work.write("v3/m.bin", patternBytes(1000, seed: 3))
        XCTAssertEqual(try PublishRun([v1], version: "1.0.0", baseURL: base, to: site).run().status, 0)
        XCTAssertEqual(try PublishRun([v2], version: "1.0.1", baseURL: base, to: site).run().status, 0)
        let server = try NginxServer(binary: nginxBinary, site: site, port: port, work: work, probe: base + "/manifest.json")
        defer { withExtendedLifetime(server) {} }
        let first = try fetch(base + "/manifest.json")
        XCTAssertNil(first.headers["etag"], "no ETag: nginx's (mtime-size) can stand for other bytes")
        let attributes = try FileManager.default.attributesOfItem(atPath: site + "/manifest.json")
        // 1.0.2: a manifest of the same size, given the same mtime (a publish within the same second).
        XCTAssertEqual(try PublishRun([v3], version: "1.0.2", baseURL: base, to: site).run().status, 0)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: site + "/manifest.json")[.size] as? Int, attributes[.size] as? Int)
        try FileManager.default.setAttributes([.modificationDate: attributes[.modificationDate]!], ofItemAtPath: site + "/manifest.json")
        let lastModified = first.headers["last-modified"] ?? ""
        for conditional in ["If-Modified-Since: \(lastModified)", "If-None-Match: \(first.headers["etag"] ?? "\"x\"")"] {
            let again = try fetch(base + "/manifest.json", headers: [conditional])
            XCTAssertEqual(again.status, 200, conditional)
            XCTAssertEqual(again.sha256, try SHA256Hasher.digest(Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json"))).hex, conditional)
        }
    }

    /// Issue 44 item 6: a base URL path may hold `;`, `'`, `$`, parentheses… (RFC 3986
    /// sub-delimiters), which nginx reads as syntax in an unquoted word: the snippet quotes
    /// its locations, so `nginx -t` accepts it and nginx serves the release with its headers.
    func testABasePathHoldingNginxSyntaxIsQuoted() throws {
        guard let nginxBinary = NginxServer.binary else {
            throw XCTSkip("nginx is not installed (scripts/setup installs it)")
        }
        let work = try Scratch("modelcast-nginx-quoted")
        self.work = work
        let port = try freeLoopbackPort()
        let base = "http://127.0.0.1:\(port)/a;b'c$d(e)!f,g=h&i+j@k~l"
        let site = work.at("site")
        let model = try work.write("m.bin", patternBytes(1000, seed: 1))
        XCTAssertEqual(try PublishRun([model], version: "1.0.0", baseURL: base, to: site).run().status, 0)
        // NginxServer runs `nginx -t` on the snippet first.
        let server = try NginxServer(binary: nginxBinary, site: site, port: port, work: work, probe: base + "/manifest.json")
        defer { withExtendedLifetime(server) {} }
        let manifest = try fetch(base + "/manifest.json")
        XCTAssertEqual(manifest.status, 200)
        XCTAssertEqual(manifest.headers["cache-control"], "no-cache, no-store")
        let live = try Release.decode(Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json")), source: "manifest")
        let file = try XCTUnwrap(live.models["m"]?.files.first)
        XCTAssertTrue(file.url.hasPrefix(base + "/models/"), file.url)
        let artifact = try fetch(file.url)
        XCTAssertEqual(artifact.status, 200, file.url)
        XCTAssertEqual(artifact.headers["cache-control"], "public, max-age=31536000, immutable")
        XCTAssertEqual(artifact.sha256, file.sha256)
        let history = try fetch(base + "/manifests/00000001.json")
        XCTAssertEqual(history.headers["content-type"], "application/json")
        let verify = try modelcast(["verify", base + "/manifest.json", "--allow-http"])
        XCTAssertEqual(verify.status, 0, verify.stdout + verify.stderr)
    }

    /// The published directory's own path may hold a space, `;`, `{`, `}` or quotes, which
    /// nginx reads as syntax unquoted: the snippet's `alias` paths are quoted, so `nginx -t`
    /// accepts it and nginx serves the release; a newline in the path cannot end the
    /// comment that names it. (`$` nginx cannot take at all: the snippet says so.)
    func testADirectoryPathHoldingNginxSyntaxIsQuoted() throws {
        guard let nginxBinary = NginxServer.binary else {
            throw XCTSkip("nginx is not installed (scripts/setup installs it)")
        }
        let work = try Scratch("modelcast-nginx-root")
        self.work = work
        let port = try freeLoopbackPort()
        let base = "http://127.0.0.1:\(port)/ml"
        let site = work.at("my site; {x} 'q' \"d\"")
        let model = try work.write("m.bin", patternBytes(1000, seed: 1))
        XCTAssertEqual(try PublishRun([model], version: "1.0.0", baseURL: base, to: site).run().status, 0)
        let server = try NginxServer(binary: nginxBinary, site: site, port: port, work: work, probe: base + "/manifest.json")
        defer { withExtendedLifetime(server) {} }
        XCTAssertEqual(try fetch(base + "/manifest.json").status, 200)
        let live = try Release.decode(Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json")), source: "manifest")
        let file = try XCTUnwrap(live.models["m"]?.files.first)
        XCTAssertEqual(try fetch(file.url).sha256, file.sha256)
        XCTAssertEqual(try fetch(base + "/manifests/00000001.json").status, 200)

        let odd = work.at("line\nbreak$dir")
        XCTAssertEqual(try PublishRun([model], version: "1.0.0", baseURL: base, to: odd).run().status, 0)
        let snippet = try String(contentsOfFile: odd + "/_modelcast/nginx.conf", encoding: .utf8)
        XCTAssertTrue(snippet.contains("include \"" + work.at("line?break$dir/_modelcast/nginx.conf") + "\";"), snippet)
        XCTAssertTrue(snippet.contains("holds `$`"), snippet)
    }
}
