import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// `modelcast serve` as a long-running preview: it follows new publishes into the
/// directory it serves, and answers byte ranges as RFC 9110 says (checked against a
/// real nginx serving the same directory with the generated snippet).
final class ServeTests: XCTestCase {
    var nginx: NginxServer?

    override func tearDown() {
        nginx = nil  // stops it
    }

    var environment: [String: String] {
        let environment = pinnedEnvironment()
        return environment
    }

    func publish(_ model: String, version: String, base: String, to site: String, file: StaticString = #filePath, line: UInt = #line) throws {
        // Versions swap one example model for another: an intended interface change.
        try PublishRun([model], version: version, baseURL: base, to: site, ["--interface-change", "--min-app-version", version], environment: environment)
            .succeeds(file: file, line: line)
    }

    struct Answer {
        let status: Int
        /// Lower-cased names.
        let headers: [String: String]
        let body: Data
    }

    /// One request through curl (HTTP/1.1): status, headers, body bytes.
    func fetch(_ url: String, method: String = "GET", headers: [String] = [], scratch: Scratch) throws -> Answer {
        let bodyFile = scratch.at("body-\(UUID().uuidString)")
        var arguments = ["curl", "-sS", "--http1.1", "-D", "-", "-o", bodyFile]
        arguments += method == "HEAD" ? ["-I"] : ["-X", method]
        for header in headers { arguments += ["-H", header] }
        arguments.append(url)
        let result = try runProcess("/usr/bin/env", arguments)
        XCTAssertEqual(result.status, 0, "curl \(url): \(result.stderr)")
        var status = 0
        var fields: [String: String] = [:]
        for line in result.stdout.split(separator: "\r\n") {
            if line.hasPrefix("HTTP/") { status = Int(line.split(separator: " ")[1]) ?? 0; continue }
            if let colon = line.firstIndex(of: ":") {
                fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        let body = (try? Data(contentsOf: URL(fileURLWithPath: bodyFile))) ?? Data()
        try? FileManager.default.removeItem(atPath: bodyFile)
        return Answer(status: status, headers: fields, body: body)
    }

    func digest(_ data: Data) throws -> String { try SHA256Hasher.digest(data).hex }

    /// Everything a server sends for one HEAD request on its own connection (curl -I
    /// would not show a body sent after the headers): what follows the header block.
    func bytesAfterHeadersOfHEAD(_ url: String, headers: [String] = []) throws -> Data {
        let parts = try XCTUnwrap(URLComponents(string: url))
        let request = "HEAD \(parts.percentEncodedPath) HTTP/1.1\r\nHost: \(parts.host!)\r\n"
            + headers.map { $0 + "\r\n" }.joined() + "Connection: close\r\n\r\n"
        let result = try runProcess("/usr/bin/env", ["python3", "-c", """
            import socket, sys
            s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
            s.sendall(sys.argv[3].encode())
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk: break
                data += chunk
            head, _, rest = data.partition(b"\\r\\n\\r\\n")
            sys.stdout.write(head.decode() + "\\n---\\n" + rest.hex())
            """, parts.host!, String(parts.port!), request])
        XCTAssertEqual(result.status, 0, result.stderr)
        let split = result.stdout.components(separatedBy: "\n---\n")
        XCTAssertEqual(split.count, 2, result.stdout)
        XCTAssertTrue(split[0].hasPrefix("HTTP/1.1 200"), split[0])
        return Data((split.last ?? "").utf8)
    }

    // MARK: - Item 9: a publish into the served directory is served

    /// serve read `_modelcast/objects.json` once: after a second publish into the same
    /// directory, the new manifest was served but its new artifact answered 404, so
    /// verify (and a device's update) failed. It now re-reads the list when the file is
    /// replaced, and only then.
    func testServeFollowsANewPublishIntoTheSameDirectory() throws {
        let work = try Scratch()
        let port = try freeLoopbackPort()
        let base = "http://127.0.0.1:\(port)/ml"
        let site = work.at("site")
        try publish("examples/models/tiny-llm.gguf", version: "1.0.0", base: base, to: site)
        let server = try BackgroundProcess(modelcastBinary, ["serve", site, "--port", String(port)])
        XCTAssertEqual(server.firstLine, base)
        let first = try fetch(base + "/manifest.json", scratch: work)
        XCTAssertEqual(first.status, 200)
        XCTAssertEqual(try Release.decode(first.body, source: "manifest").models["m"]?.version, "1.0.0")

        // A second version published into the directory serve is serving.
        try publish("examples/models/TinyClassifier.mlpackage", version: "1.1.0", base: base, to: site)
        let onDisk = try Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json"))
        let manifest = try fetch(base + "/manifest.json", scratch: work)
        XCTAssertEqual(manifest.status, 200)
        XCTAssertEqual(manifest.body, onDisk, "the new manifest, byte for byte")
        let release = try Release.decode(manifest.body, source: "manifest")
        XCTAssertEqual(release.models["m"]?.version, "1.1.0")
        let file = try XCTUnwrap(release.models["m"]?.files.first)
        XCTAssertTrue(file.url.hasSuffix("/models/m/1.1.0/TinyClassifier.mlpackage.zip"), file.url)
        let artifact = try fetch(file.url, scratch: work)
        XCTAssertEqual(artifact.status, 200, "the new artifact must be served: \(server.standardError)")
        XCTAssertEqual(artifact.headers["content-type"], "application/zip")
        XCTAssertEqual(artifact.headers["cache-control"], "public, max-age=31536000, immutable")
        XCTAssertEqual(artifact.headers["content-length"], String(file.size))
        XCTAssertEqual(Int64(artifact.body.count), file.size)
        XCTAssertEqual(try digest(artifact.body), file.sha256)
        // The new history record, and the previous release's artifact (now the rollback target).
        XCTAssertEqual(try fetch(base + "/manifests/00000002.json", scratch: work).status, 200)
        XCTAssertEqual(try fetch(base + "/models/m/1.0.0/tiny-llm.gguf", scratch: work).status, 200)

        let verify = try modelcast(["verify", base + "/manifest.json", "--allow-http"])
        XCTAssertEqual(verify.status, 0, verify.stdout + verify.stderr)

        // Re-read once for the one replacement, not on every request.
        for _ in 0..<5 { XCTAssertEqual(try fetch(base + "/manifest.json", method: "HEAD", scratch: work).status, 200) }
        let log = server.standardError
        XCTAssertEqual(log.components(separatedBy: "reloaded _modelcast/objects.json").count - 1, 1, log)
    }

    /// A replacement list that does not parse (or a list that disappears) leaves the
    /// previous one in use, said on stderr; the next good one is picked up.
    func testServeKeepsTheListItHasWhenTheNewOneIsBroken() throws {
        let work = try Scratch()
        let port = try freeLoopbackPort()
        let base = "http://127.0.0.1:\(port)/ml"
        let site = work.at("site")
        let objects = site + "/_modelcast/objects.json"
        try publish("examples/models/tiny-llm.gguf", version: "1.0.0", base: base, to: site)
        let good = try Data(contentsOf: URL(fileURLWithPath: objects))
        let count = try XCTUnwrap((try JSONSerialization.jsonObject(with: good) as? [String: Any])?["objects"] as? [Any]).count
        let server = try BackgroundProcess(modelcastBinary, ["serve", site, "--port", String(port)])
        XCTAssertEqual(server.firstLine, base)
        let artifact = base + "/models/m/1.0.0/tiny-llm.gguf"

        // Replaced (by rename, as a publish does) with something that is not an object list.
        try Data("{\"base_url\": ".utf8).write(to: URL(fileURLWithPath: objects), options: .atomic)
        XCTAssertEqual(try fetch(artifact, scratch: work).status, 200)
        XCTAssertEqual(try fetch(base + "/manifest.json", scratch: work).status, 200)
        XCTAssertTrue(server.standardError.contains("cannot reload \(objects)"), server.standardError)
        XCTAssertTrue(server.standardError.contains("still serving the previous list of \(count) objects"), server.standardError)
        // Said once per replacement, not once per request.
        XCTAssertEqual(server.standardError.components(separatedBy: "cannot reload").count - 1, 1, server.standardError)

        // Gone altogether: still the previous list (not "serve every file").
        try FileManager.default.removeItem(atPath: objects)
        XCTAssertEqual(try fetch(artifact, scratch: work).status, 200)
        XCTAssertEqual(try fetch(base + "/_modelcast/nginx.conf", scratch: work).status, 404)
        XCTAssertTrue(server.standardError.contains("\(objects) is gone"), server.standardError)

        // Back, then a real publish: its new objects are served.
        try good.write(to: URL(fileURLWithPath: objects), options: .atomic)
        try publish("examples/models/TinyClassifier.mlpackage", version: "1.1.0", base: base, to: site)
        let zip = try fetch(base + "/models/m/1.1.0/TinyClassifier.mlpackage.zip", scratch: work)
        XCTAssertEqual(zip.status, 200, server.standardError)
        XCTAssertEqual(zip.body.count, 19019)
        let verify = try modelcast(["verify", base + "/manifest.json", "--allow-http"])
        XCTAssertEqual(verify.status, 0, verify.stdout + verify.stderr)
    }

    // MARK: - Item 10: byte ranges, against nginx and RFC 9110

    /// Starts nginx on 127.0.0.1:`port` with the snippet modelcast wrote into `site`.
    func startNginx(site: String, port: Int, work: Scratch) throws {
        guard let binary = NginxServer.binary else { throw XCTSkip("nginx is not installed (scripts/setup installs it)") }
        nginx = try NginxServer(binary: binary, site: site, port: port, work: work, probe: "http://127.0.0.1:\(port)/ml/manifest.json", gzip: false)
    }

    /// What RFC 9110 §14 requires for one Range header on a representation of `size`
    /// bytes, with the single-range policy serve follows: status, and the first and
    /// last byte for a 206.
    struct Expected {
        let status: Int
        let range: ClosedRange<Int>?
        /// Where nginx answers otherwise (both RFC-valid unless said), and why serve differs.
        let nginxDiffers: String?

        static func partial(_ range: ClosedRange<Int>) -> Expected { Expected(status: 206, range: range, nginxDiffers: nil) }
        static let whole = Expected(status: 200, range: nil, nginxDiffers: nil)
        static let unsatisfiable = Expected(status: 416, range: nil, nginxDiffers: nil)
        func unlikeNginx(_ why: String) -> Expected { Expected(status: status, range: range, nginxDiffers: why) }
    }

    func rangeTable(size: Int) -> [(String, Expected)] {
        [
            ("bytes=0-0", .partial(0...0)),
            ("bytes=0-99", .partial(0...99)),
            ("bytes=100-", .partial(100...(size - 1))),
            ("bytes=-5", .partial((size - 5)...(size - 1))),
            ("bytes=-0", .unsatisfiable),  // a zero suffix-length is never satisfiable (§14.1.1)
            ("bytes=-99999", .partial(0...(size - 1))),  // a suffix longer than the file: all of it
            ("bytes=\(size)-", .unsatisfiable),  // first-pos must be below the length
            ("bytes=\(size - 1)-", .partial((size - 1)...(size - 1))),
            ("bytes=0-99999", .partial(0...(size - 1))),  // last-pos is clamped to size - 1
            ("BYTES=0-1", .partial(0...1)),  // range units are case-insensitive (§14.1)
            ("bytes=5-2", Expected.whole.unlikeNginx(
                "nginx rejects it with 416; RFC 9110 §14.2 lets a server ignore or reject an invalid range-spec, and serve ignores it (200) as it does every invalid Range")),
            ("bytes=abc", Expected.whole.unlikeNginx("nginx answers 416; an invalid ranges-specifier may be ignored (§14.2): 200")),
            ("bytes=0-1,3-4", Expected.whole.unlikeNginx(
                "nginx sends a 206 multipart/byteranges; serve answers one range only and ignores a multi-range request (200, allowed by §14.2); S3 does not serve several ranges either")),
            ("items=0-1", .whole),  // a range unit the server does not know MUST be ignored (§14.2)
            ("bytes=1-2,", Expected.partial(1...2).unlikeNginx(
                "nginx answers 416; a recipient MUST accept empty list elements (§5.6.1), so this is the one range 1-2")),
            ("bytes=0-99999999999999999999999", Expected.partial(0...(size - 1)).unlikeNginx(
                "nginx answers 416 to a number beyond its off_t; RFC 9110 puts no limit on last-pos, which is clamped to size - 1")),
            ("bytes=-99999999999999999999999", Expected.partial(0...(size - 1)).unlikeNginx(
                "nginx answers 416 to a number beyond its off_t; a suffix longer than the representation means all of it (§14.1.2)")),
        ]
    }

    /// Each Range form through serve and through nginx serving the same directory with
    /// the generated snippet: status, Content-Range, Content-Length and body bytes agree,
    /// except where nginx departs from RFC 9110's requirements or from serve's single-range
    /// policy (marked in the table, with the reason); there serve answers as the RFC says.
    func testRangeRequestsAnswerLikeNginxAndRFC9110() throws {
        let work = try Scratch("modelcast-serve-range")
        let nginxPort = try freeLoopbackPort()
        let base = "http://127.0.0.1:\(nginxPort)/ml"
        let site = work.at("site")
        try publish("examples/models/tiny-llm.gguf", version: "1.0.0", base: base, to: site)
        try startNginx(site: site, port: nginxPort, work: work)
        let servePort = try freeLoopbackPort()
        let server = try BackgroundProcess(modelcastBinary, ["serve", site, "--port", String(servePort)])
        XCTAssertEqual(server.firstLine, "http://127.0.0.1:\(servePort)/ml")
        let serveBase = "http://127.0.0.1:\(servePort)/ml"

        // An artifact, and the manifest (nginx serves it with `etag on`, no gzip).
        for key in ["models/m/1.0.0/tiny-llm.gguf", "manifest.json"] {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: site + "/" + key))
            let size = bytes.count
            XCTAssertGreaterThan(size, 100, key)
            for (range, expected) in rangeTable(size: size) {
                let context = "\(key) Range: \(range)"
                let ours = try fetch(serveBase + "/" + key, headers: ["Range: \(range)"], scratch: work)
                let theirs = try fetch(base + "/" + key, headers: ["Range: \(range)"], scratch: work)
                // What the RFC requires.
                XCTAssertEqual(ours.status, expected.status, context)
                switch expected.status {
                case 206:
                    let slice = try XCTUnwrap(expected.range)
                    XCTAssertEqual(ours.headers["content-range"], "bytes \(slice.lowerBound)-\(slice.upperBound)/\(size)", context)
                    XCTAssertEqual(ours.headers["content-length"], String(slice.count), context)
                    XCTAssertEqual(ours.body, bytes[slice], context)
                case 416:
                    XCTAssertEqual(ours.headers["content-range"], "bytes */\(size)", context)
                    XCTAssertTrue(ours.body.isEmpty, context)
                default:
                    XCTAssertNil(ours.headers["content-range"], context)
                    XCTAssertEqual(ours.headers["content-length"], String(size), context)
                    XCTAssertEqual(ours.body, bytes, context)
                }
                if ours.status == 200 || ours.status == 206 {
                    XCTAssertEqual(ours.headers["accept-ranges"], "bytes", context)
                }
                // What nginx answers for the same file.
                if let why = expected.nginxDiffers {
                    XCTAssertNotEqual(theirs.status, ours.status, "\(context): the table says nginx differs (\(why)); it no longer does")
                    continue
                }
                XCTAssertEqual(ours.status, theirs.status, "\(context): nginx answers \(theirs.status)")
                XCTAssertEqual(ours.headers["content-range"], theirs.headers["content-range"], context)
                if ours.status != 416 {  // nginx's 416 carries an HTML page, serve's is empty
                    XCTAssertEqual(ours.headers["content-length"], theirs.headers["content-length"], context)
                    XCTAssertEqual(ours.body, theirs.body, context)
                }
            }
        }
    }

    /// HEAD answers GET's headers without a body; a Range on HEAD is ignored (RFC 9110
    /// §14.2: GET is the only method range handling is defined for; nginx answers 206
    /// there). If-Range: a strong ETag or the Last-Modified date that still matches lets
    /// the Range apply, anything else gets the whole file (as nginx does); If-None-Match
    /// comes first (304).
    func testHeadAndConditionalRanges() throws {
        let work = try Scratch("modelcast-serve-range")
        let nginxPort = try freeLoopbackPort()
        let base = "http://127.0.0.1:\(nginxPort)/ml"
        let site = work.at("site")
        try publish("examples/models/tiny-llm.gguf", version: "1.0.0", base: base, to: site)
        try startNginx(site: site, port: nginxPort, work: work)
        let servePort = try freeLoopbackPort()
        let server = try BackgroundProcess(modelcastBinary, ["serve", site, "--port", String(servePort)])
        let serveBase = try XCTUnwrap(server.firstLine)
        let key = "/models/m/1.0.0/tiny-llm.gguf"
        let bytes = try Data(contentsOf: URL(fileURLWithPath: site + key))
        let size = bytes.count

        // HEAD: the same headers as GET, no body.
        let get = try fetch(serveBase + key, scratch: work)
        let head = try fetch(serveBase + key, method: "HEAD", scratch: work)
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(try bytesAfterHeadersOfHEAD(serveBase + key), Data(), "HEAD sends no body")
        for field in ["content-length", "content-type", "cache-control", "etag", "last-modified", "accept-ranges"] {
            XCTAssertNotNil(get.headers[field], field)
            XCTAssertEqual(head.headers[field], get.headers[field], field)
        }
        // A Range on HEAD is ignored, satisfiable or not.
        for range in ["bytes=-5", "bytes=0-9", "bytes=\(size)-"] {
            let ranged = try fetch(serveBase + key, method: "HEAD", headers: ["Range: \(range)"], scratch: work)
            XCTAssertEqual(ranged.status, 200, range)
            XCTAssertEqual(ranged.headers["content-length"], String(size), range)
            XCTAssertNil(ranged.headers["content-range"], range)
            XCTAssertEqual(try bytesAfterHeadersOfHEAD(serveBase + key, headers: ["Range: \(range)"]), Data(), range)
        }

        // The ETag is strong (If-Range compares strongly).
        let etag = try XCTUnwrap(get.headers["etag"])
        XCTAssertTrue(etag.hasPrefix("\""), etag)
        let lastModified = try XCTUnwrap(get.headers["last-modified"])
        let nginxHead = try fetch(base + key, method: "HEAD", scratch: work)
        let nginxETag = try XCTUnwrap(nginxHead.headers["etag"])
        let nginxLastModified = try XCTUnwrap(nginxHead.headers["last-modified"])
        XCTAssertEqual(lastModified, nginxLastModified)

        // (If-Range for serve, for nginx, expected status); each server gets its own validator.
        let cases: [(String, String, String, Int)] = [
            ("bytes=0-1", etag, nginxETag, 206),
            ("bytes=0-1", lastModified, nginxLastModified, 206),
            ("bytes=0-1", "W/" + etag, "W/" + nginxETag, 200),  // a weak tag never matches strongly
            ("bytes=0-1", "\"something-else\"", "\"something-else\"", 200),
            ("bytes=0-1", "Sun, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT", 200),
            ("bytes=\(size)-", "\"something-else\"", "\"something-else\"", 200),  // the Range is ignored before it is judged
            ("bytes=\(size)-", etag, nginxETag, 416),
        ]
        for (range, ourValidator, nginxValidator, status) in cases {
            let context = "Range: \(range), If-Range: \(ourValidator)"
            let ours = try fetch(serveBase + key, headers: ["Range: \(range)", "If-Range: \(ourValidator)"], scratch: work)
            let theirs = try fetch(base + key, headers: ["Range: \(range)", "If-Range: \(nginxValidator)"], scratch: work)
            XCTAssertEqual(ours.status, status, context)
            XCTAssertEqual(theirs.status, status, "nginx, " + context)
            XCTAssertEqual(ours.headers["content-range"], theirs.headers["content-range"], context)
            if status != 416 {
                XCTAssertEqual(ours.body, theirs.body, context)
                XCTAssertEqual(ours.body, status == 206 ? bytes[0...1] : bytes, context)
            }
        }

        // If-None-Match is evaluated before the Range: 304, for a list too, and weakly.
        for value in [etag, "\"x\", \(etag)", "W/" + etag, "*"] {
            let answer = try fetch(serveBase + key, headers: ["Range: bytes=0-1", "If-None-Match: \(value)"], scratch: work)
            XCTAssertEqual(answer.status, 304, value)
            XCTAssertTrue(answer.body.isEmpty, value)
            XCTAssertEqual(answer.headers["etag"], etag, value)
        }
        XCTAssertEqual(try fetch(serveBase + key, headers: ["If-None-Match: \"x\""], scratch: work).status, 200)
        XCTAssertEqual(try fetch(serveBase + key, headers: ["If-Modified-Since: \(lastModified)"], scratch: work).status, 304)
        XCTAssertEqual(try fetch(serveBase + key, headers: ["If-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT"], scratch: work).status, 200)
        // Only GET and HEAD.
        let post = try fetch(serveBase + key, method: "POST", scratch: work)
        XCTAssertEqual(post.status, 405)
        XCTAssertEqual(post.headers["allow"], "GET, HEAD")
    }

    /// `serve` answers nothing reached through a symbolic link that leaves the served
    /// directory: not `manifest.json` itself, not a file, not a file under a linked
    /// directory (issue 24, item 7); a link that stays inside still serves.
    func testServeRefusesLinksThatLeaveTheDirectory() throws {
        let work = try Scratch()
        let site = work.at("site")
        let port = try freeLoopbackPort()
        try publish(try work.write("m.bin", patternBytes(5000, seed: 1)), version: "1.0.0", base: "http://127.0.0.1:\(port)", to: site)
        _ = try work.write("outside/secret.json", Array("{\"secret\": true}".utf8))
        _ = try work.write("outside/models/m/1.0.0/m.bin", Array("outside bytes".utf8))
        let server = try BackgroundProcess(modelcastBinary, ["serve", site, "--port", String(port)])
        XCTAssertTrue(server.firstLine.contains("127.0.0.1:\(port)"), server.firstLine)
        let base = "http://127.0.0.1:\(port)"
        XCTAssertEqual(try fetch(base + "/models/m/1.0.0/m.bin", scratch: work).status, 200)

        // A link inside the directory still serves.
        try FileManager.default.moveItem(atPath: site + "/manifest.json", toPath: site + "/manifest-real.json")
        try FileManager.default.createSymbolicLink(atPath: site + "/manifest.json", withDestinationPath: "manifest-real.json")
        XCTAssertEqual(try fetch(base + "/manifest.json", scratch: work).status, 200)
        // manifest.json itself linked outside.
        try FileManager.default.removeItem(atPath: site + "/manifest.json")
        try FileManager.default.createSymbolicLink(atPath: site + "/manifest.json", withDestinationPath: work.at("outside/secret.json"))
        let manifest = try fetch(base + "/manifest.json", scratch: work)
        XCTAssertEqual(manifest.status, 404)
        XCTAssertFalse(String(decoding: manifest.body, as: UTF8.self).contains("secret"))
        // A directory on the way linked outside.
        try FileManager.default.removeItem(atPath: site + "/models/m")
        try FileManager.default.createSymbolicLink(atPath: site + "/models/m", withDestinationPath: work.at("outside/models/m"))
        let artifact = try fetch(base + "/models/m/1.0.0/m.bin", scratch: work)
        XCTAssertEqual(artifact.status, 404)
        XCTAssertFalse(String(decoding: artifact.body, as: UTF8.self).contains("outside bytes"))
        _ = server
    }
}
