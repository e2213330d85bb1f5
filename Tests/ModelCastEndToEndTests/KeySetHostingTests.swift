import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// Issue 51: a directory target's hosting files carry the key set chain (`keys/N.json`,
/// `.minisig`, `.sigs`: immutable) and `manifest.json.sigs` (live, cached like the
/// manifest), so `modelcast serve` and nginx with the generated snippet serve what a
/// device walks and counts, with the headers it needs.
final class KeySetHostingTests: XCTestCase {
    /// Status, headers (lower-cased names) and body of one GET, via curl.
    func get(_ url: String, _ work: Scratch) throws -> (status: Int, headers: [String: String], body: Data) {
        let bodyFile = work.at("body-\(UUID().uuidString)")
        let result = try runProcess("/usr/bin/env", ["curl", "-sS", "-D", "-", "-o", bodyFile, "-H", "Accept-Encoding: gzip", url])
        XCTAssertEqual(result.status, 0, result.stderr)
        var status = 0
        var fields: [String: String] = [:]
        for line in result.stdout.split(separator: "\r\n") {
            if line.hasPrefix("HTTP/") { status = Int(line.split(separator: " ")[1]) ?? 0; continue }
            if let colon = line.firstIndex(of: ":") {
                fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return (status, fields, (try? Data(contentsOf: URL(fileURLWithPath: bodyFile))) ?? Data())
    }

    func keygen(_ work: Scratch, _ name: String) throws -> (secret: String, pub: String, id: String) {
        let result = try modelcast(["keygen", "--unencrypted", "--public-key", work.at(name + ".pub"), "--secret-key", work.at(name + ".key"), "--json"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        return (work.at(name + ".key"), work.at(name + ".pub"), try XCTUnwrap(object["key_id"] as? String))
    }

    /// A site under key set 1 (two roots; manifest keys K1 and K2, threshold 2) and key set 2
    /// (K1 revoked for K3), its live release signed by K2 and K3: the paths every served
    /// object must answer, with the Content-Type and Cache-Control each must carry.
    func makeSite(_ work: Scratch, base: String) throws -> (site: String, expected: [(path: String, contentType: String, cacheControl: String)]) {
        let r1 = try keygen(work, "r1"), r2 = try keygen(work, "r2")
        let k1 = try keygen(work, "k1"), k2 = try keygen(work, "k2"), k3 = try keygen(work, "k3")
        let site = work.at("site")
        func publish(_ version: String, _ signers: [(secret: String, pub: String, id: String)]) throws {
            let file = try work.write("in/\(version).bin", patternBytes(3000, seed: UInt32(version.count)))
            let result = try PublishRun(["m=" + file], name: nil, version: version, baseURL: base, to: site, signers.flatMap { ["--sign", $0.secret] }).run()
            XCTAssertEqual(result.status, 0, result.stderr)
        }
        try publish("1.0.0", [k1])
        let created = try modelcast(["keys", "create", site, "--root", r1.pub, "--root", r2.pub, "--root-threshold", "2", "--manifest-key", k1.pub,
                                     "--manifest-key", k2.pub, "--manifest-threshold", "2", "--sign-root", r1.secret, "--sign-root", r2.secret])
        XCTAssertEqual(created.status, 0, created.stderr)
        try publish("1.0.1", [k1, k2])
        let rotated = try modelcast(["keys", "rotate", site, "--manifest-key", k3.pub, "--revoke", k1.id, "--sign-root", r1.secret, "--sign-root", r2.secret])
        XCTAssertEqual(rotated.status, 0, rotated.stderr)
        try publish("1.0.2", [k2, k3])
        let kept = try FileManager.default.contentsOfDirectory(atPath: site + "/manifests").filter { $0.hasSuffix(".sigs") }.sorted()
        XCTAssertEqual(kept.count, 2, "1.0.1 and 1.0.2 keep their signature lists beside their records: \(kept)")
        let immutable = "public, max-age=31536000, immutable"
        var expected: [(String, String, String)] = []
        for version in [1, 2] {
            expected.append(("keys/\(version).json", "application/json", immutable))
            expected.append(("keys/\(version).json.minisig", "text/plain", immutable))
            expected.append(("keys/\(version).json.sigs", "text/plain", immutable))
        }
        for name in kept { expected.append(("manifests/" + name, "", immutable)) }
        expected.append(("manifest.json.sigs", "text/plain", "no-cache, no-store"))
        return (site, expected)
    }

    /// Every expected object answers 200 with its exact bytes, never re-encoded, and the
    /// headers it was listed with ("" content type: not checked).
    func checkServed(_ site: String, base: String, _ expected: [(path: String, contentType: String, cacheControl: String)], _ work: Scratch, server: String) throws {
        for object in expected {
            let answer = try get(base + "/" + object.path, work)
            XCTAssertEqual(answer.status, 200, "\(server): \(object.path)")
            XCTAssertEqual(answer.body, try Data(contentsOf: URL(fileURLWithPath: site + "/" + object.path)), "\(server): \(object.path)")
            XCTAssertNil(answer.headers["content-encoding"], "\(server): \(object.path)")
            XCTAssertEqual(answer.headers["cache-control"], object.cacheControl, "\(server): \(object.path)")
            if !object.contentType.isEmpty {
                XCTAssertTrue(answer.headers["content-type"]?.hasPrefix(object.contentType) == true,
                              "\(server): \(object.path) is served as \(answer.headers["content-type"] ?? "nothing"), not \(object.contentType)")
            }
        }
    }

    func testServeAndNginxServeTheKeySetChainAndTheSignatureList() throws {
        let work = try Scratch("modelcast-keys-hosting")
        let port = try freeLoopbackPort()
        let base = "http://127.0.0.1:\(port)/ml"
        let (site, expected) = try makeSite(work, base: base)

        // The hosting files list them: _headers rules, and the upload scripts put the chain
        // and the list before the manifest (the document after its signatures).
        let headers = try String(contentsOfFile: site + "/_headers", encoding: .utf8)
        for line in ["/ml/keys/*\n  Cache-Control: public, max-age=31536000, immutable", "/ml/keys/*.json\n  Content-Type: application/json",
                     "/ml/keys/*.sigs\n  Content-Type: text/plain; charset=utf-8", "/ml/manifest.json.sigs\n  Cache-Control: no-cache, no-store\n  Content-Type: text/plain; charset=utf-8"] {
            XCTAssertTrue(headers.contains(line), "\(line)\n---\n\(headers)")
        }
        for script in ["upload-aws.sh", "upload-rclone.sh", "upload-wrangler.sh"] {
            let text = try String(contentsOfFile: site + "/_modelcast/" + script, encoding: .utf8)
            func position(_ needle: String) -> Int {
                guard let range = text.range(of: needle) else { XCTFail("\(script) does not upload \(needle)"); return -1 }
                return text.distance(from: text.startIndex, to: range.lowerBound)
            }
            let sigs = position(" 'keys/2.json.sigs' "), document = position(" 'keys/2.json' "), list = position(" 'manifest.json.sigs' "), manifest = position(" 'manifest.json' ")
            XCTAssertLessThan(sigs, document, script)
            XCTAssertLessThan(document, manifest, script)
            XCTAssertLessThan(list, manifest, script)
        }

        let serve = try BackgroundProcess(modelcastBinary, ["serve", site, "--port", String(port)])
        XCTAssertEqual(serve.firstLine, base)
        try checkServed(site, base: base, expected, work, server: "modelcast serve")
        withExtendedLifetime(serve) {}
    }

    func testNginxWithTheGeneratedSnippetServesTheKeySetChainAndTheSignatureList() throws {
        guard let nginxBinary = NginxServer.binary else {
            throw XCTSkip("nginx is not installed (scripts/setup installs it)")
        }
        let work = try Scratch("modelcast-keys-nginx")
        let port = try freeLoopbackPort()
        let base = "http://127.0.0.1:\(port)/ml"
        let (site, expected) = try makeSite(work, base: base)
        let server = try NginxServer(binary: nginxBinary, site: site, port: port, work: work, probe: base + "/manifest.json")
        defer { withExtendedLifetime(server) {} }
        try checkServed(site, base: base, expected, work, server: "nginx")
    }
}
