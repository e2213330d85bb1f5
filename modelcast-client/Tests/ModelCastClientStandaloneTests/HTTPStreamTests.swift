import Foundation
import XCTest
@testable import ModelCastClient
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `HTTPStream`, the one way the client reads the network, against nginx: what each
/// platform's transport (`URLSessionTransport`, `CurlTransport` on Linux) must do alike.
final class HTTPStreamTests: XCTestCase {
    private final class Rig {
        let scratch: Scratch
        let nginx: LocalNginx
        let http = HTTPStream(timeout: 10, bounds: TransferBounds(minimumRate: 0, window: 30, metadataDeadline: 30))
        /// A file nginx serves at `/f.bin` (and at `/locked/f.bin`).
        let file = testBytes(300_000, seed: 9)

        init() throws {
            scratch = try Scratch()
            let root = scratch.at("site")
            for folder in ["", "locked", "gzipped"] {
                try FileManager.default.createDirectory(at: root.appendingPathComponent(folder), withIntermediateDirectories: true)
            }
            try file.write(to: root.appendingPathComponent("f.bin"))
            try file.write(to: root.appendingPathComponent("locked/f.bin"))
            nginx = try LocalNginx(root: root, work: scratch.at("nginx"))
        }

        deinit { http.invalidate() }

        func request(_ path: String, headers: [String: String] = [:]) -> URLRequest {
            var request = URLRequest(url: URL(string: nginx.base + path)!)
            for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
            return request
        }

        /// The response and the body as the handlers got them.
        func get(_ request: URLRequest) async throws -> (HTTPURLResponse, Data, heads: Int) {
            let body = Body()
            let response = try await http.get(request, metadata: false, onResponse: { _ in body.heads += 1 }, onData: { body.data.append($0) })
            return (response, body.data, body.heads)
        }
    }

    // @unchecked: written by one request's handlers, one at a time; read once it has ended.
    private final class Body: @unchecked Sendable {
        var data = Data()
        var heads = 0
    }

    /// A redirect is followed with the request's own headers (a resume's Range goes to the
    /// new location), the redirect's body (nginx's HTML page) never reaches the handler,
    /// and the head handed over, once, is the final response's, its fields found in any case.
    func testARedirectIsFollowedWithTheRequestsHeadersAndOnlyTheFinalAnswerIsHandedOver() async throws {
        let rig = try Rig()
        let (response, body, heads) = try await rig.get(rig.request("/moved/f.bin", headers: ["Range": "bytes=1000-", "Accept-Encoding": "identity"]))
        XCTAssertEqual(response.statusCode, 206)
        XCTAssertEqual(response.value(forHTTPHeaderField: "content-range"), "bytes 1000-299999/300000")
        XCTAssertEqual(response.value(forHTTPHeaderField: "CONTENT-LENGTH"), "299000")
        XCTAssertNotNil(response.value(forHTTPHeaderField: "etag"))
        XCTAssertEqual(heads, 1)
        XCTAssertEqual(body, rig.file.dropFirst(1000))
        XCTAssertEqual(rig.nginx.statuses("/moved/f.bin"), [302])
        XCTAssertEqual(rig.nginx.statuses("/f.bin"), [206])
    }

    /// A redirect loop ends, after 20 redirects, with a network error that says so.
    func testARedirectLoopEndsAsTooManyRedirects() async throws {
        let rig = try Rig()
        do {
            let (response, _, _) = try await rig.get(rig.request("/loop/start"))
            XCTFail("the loop ended with HTTP \(response.statusCode)")
        } catch let error as ClientError {
            XCTAssertEqual(error, .network(url: rig.nginx.base + "/loop/start", reason: "too many redirects"))
        }
        #if os(Linux)
        XCTAssertEqual(rig.nginx.statuses("/loop/again").count, 20, "the start and 20 redirects followed")
        #endif
    }

    /// A 401 that asks for credentials (the client has none) is an answer like any other:
    /// the request ends with it at once, for the caller to refuse by its status.
    func testA401EndsTheRequestWithItsStatus() async throws {
        let rig = try Rig()
        let started = Date()
        let (response, _, heads) = try await rig.get(rig.request("/locked/f.bin"))
        XCTAssertEqual(response.statusCode, 401)
        XCTAssertNotNil(response.value(forHTTPHeaderField: "www-authenticate"))
        XCTAssertEqual(heads, 1)
        XCTAssertLessThan(Date().timeIntervalSince(started), 10, "ended by the idle timeout, not by the answer")
    }

    /// Connections are reused: several requests one after the other on one stream each get
    /// their whole answer (a pooled handle's state never leaks into the next request).
    func testRequestsOneAfterTheOtherEachGetTheirOwnAnswer() async throws {
        let rig = try Rig()
        for offset in [0, 5, 299_999] {
            let (response, body, _) = try await rig.get(rig.request("/f.bin", headers: offset > 0 ? ["Range": "bytes=\(offset)-"] : [:]))
            XCTAssertEqual(response.statusCode, offset > 0 ? 206 : 200)
            XCTAssertEqual(body, rig.file.dropFirst(offset))
        }
        let (missing, _, _) = try await rig.get(rig.request("/nothing-here.bin"))
        XCTAssertEqual(missing.statusCode, 404)
    }

    #if os(Linux)
    /// The bytes are the server's as sent: a gzip-encoded body is handed over encoded (and
    /// fails its digest), never decoded on the way (URLSession decodes it on Apple platforms).
    func testABodyIsNeverDecoded() async throws {
        let rig = try Rig()
        let encoded = Data([0x1f, 0x8b, 0x08, 0x00]) + testBytes(1000, seed: 3)  // a gzip header, then anything
        try encoded.write(to: rig.scratch.at("site/gzipped/g.txt.gz"))
        let (response, body, _) = try await rig.get(rig.request("/gzipped/g.txt", headers: ["Accept-Encoding": "identity"]))
        XCTAssertEqual(response.value(forHTTPHeaderField: "Content-Encoding"), "gzip")
        XCTAssertEqual(body, encoded)
    }
    #endif
}
