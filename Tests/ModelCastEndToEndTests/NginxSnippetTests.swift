import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// Serves a published directory through a real nginx (on 127.0.0.1) with the
/// generated snippet, and checks the headers a device would get.
final class NginxSnippetTests: XCTestCase {
    var nginx: Process?
    var work: Scratch?

    override func tearDown() {
        if let nginx, nginx.isRunning {
            nginx.terminate()
            nginx.waitUntilExit()
        }
    }

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
        guard let nginxBinary = ["/usr/sbin/nginx", "/usr/bin/nginx"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw XCTSkip("nginx is not installed (scripts/setup installs it)")
        }
        let work = try Scratch("modelcast-nginx")
        self.work = work
        chmod(work.path, 0o755)  // nginx workers run unprivileged
        let port = try freeLoopbackPort()
        let base = "http://127.0.0.1:\(port)/ml"
        let site = work.at("site")
        var environment = ProcessInfo.processInfo.environment
        environment["SOURCE_DATE_EPOCH"] = "1790000000"
        let keys = try modelcast(["keygen", "--unencrypted", "--public-key", work.at("k.pub"), "--secret-key", work.at("k.key")])
        XCTAssertEqual(keys.status, 0, keys.stderr)
        for (model, version) in [("examples/models/tiny-llm.gguf", "1.0.0"), ("examples/models/TinyClassifier.mlpackage", "1.1.0")] {
            let result = try modelcast(["publish", model, "--name", "m", "--version", version, "--base-url", base, "--to", site, "--sign", work.at("k.key")], environment: environment)
            XCTAssertEqual(result.status, 0, result.stderr)
        }
        // A second channel: the snippet serves its manifest and signature too.
        let beta = try modelcast(["publish", "examples/models/retrained/TinyClassifier.mlpackage", "--name", "m", "--version", "1.2.0", "--channel", "beta",
                                  "--base-url", base, "--to", site, "--sign", work.at("k.key")], environment: environment)
        XCTAssertEqual(beta.status, 0, beta.stderr)
        let config = """
            daemon off;
            worker_processes 1;
            pid \(work.at("nginx.pid"));
            error_log \(work.at("error.log"));
            events { worker_connections 64; }
            http {
                access_log off;
                client_body_temp_path \(work.at("tmp-body"));
                proxy_temp_path \(work.at("tmp-proxy"));
                fastcgi_temp_path \(work.at("tmp-fastcgi"));
                uwsgi_temp_path \(work.at("tmp-uwsgi"));
                scgi_temp_path \(work.at("tmp-scgi"));
                gzip on;
                gzip_types *;
                gzip_min_length 1;
                server {
                    listen 127.0.0.1:\(port);
                    include \(site)/_modelcast/nginx.conf;
                }
            }
            """
        try config.write(toFile: work.at("nginx.conf"), atomically: true, encoding: .utf8)
        let test = try runProcess(nginxBinary, ["-t", "-p", work.path, "-c", work.at("nginx.conf"), "-e", work.at("error.log")])
        XCTAssertEqual(test.status, 0, "nginx rejects the generated snippet: \(test.stderr)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: nginxBinary)
        process.arguments = ["-p", work.path, "-c", work.at("nginx.conf"), "-e", work.at("error.log")]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        nginx = process
        var ready = false
        for _ in 0..<200 where !ready {
            usleep(25_000)
            ready = (try? runProcess("/usr/bin/env", ["curl", "-s", "-o", "/dev/null", base + "/manifest.json"]).status) == 0
        }
        XCTAssertTrue(ready, "nginx did not start: \((try? String(contentsOfFile: work.at("error.log"), encoding: .utf8)) ?? "")")

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
}
