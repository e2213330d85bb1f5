import Foundation
import XCTest
@testable import ModelCastCore
import ModelCastTestSupport

final class SigV4Tests: XCTestCase {
    private static let vectors = repositoryRoot + "/Tests/ModelCastCoreTests/SigV4Vectors"

    // MARK: - HMAC-SHA256

    // RFC 4231 section 4 (case 5 truncates the output, so it is left out).
    func testHMACSHA256MatchesRFC4231() throws {
        let cases: [(number: Int, key: [UInt8], data: [UInt8], mac: String)] = [
            (1, [UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8),
             "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
            (2, Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
             "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
            (3, [UInt8](repeating: 0xaa, count: 20), [UInt8](repeating: 0xdd, count: 50),
             "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
            (4, Array(1...25), [UInt8](repeating: 0xcd, count: 50),
             "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
            (6, [UInt8](repeating: 0xaa, count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
             "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
            (7, [UInt8](repeating: 0xaa, count: 131),
             Array("This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.".utf8),
             "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
        ]
        for testCase in cases {
            let mac = try HMACSHA256.authenticate(key: testCase.key, message: testCase.data)
            XCTAssertEqual(hex(mac), testCase.mac, "RFC 4231 test case \(testCase.number)")
        }
    }

    func testHMACSHA256WithEmptyKeyAndMessage() throws {
        // A NULL key tells EVP_MAC_init to keep the previous key; the empty key must not become one.
        XCTAssertEqual(hex(try HMACSHA256.authenticate(key: [], message: [])),
                       "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    func testReusedHMACContextMatchesFreshOnes() throws {
        let context = try HMACSHA256Context()
        let keys: [[UInt8]] = [Array("Jefe".utf8), [], [UInt8](repeating: 0xaa, count: 131), [0x0b]]
        for key in keys {
            let message = Array("what do ya want for nothing?".utf8)
            XCTAssertEqual(try context.authenticate(key: key, message: message),
                           try HMACSHA256.authenticate(key: key, message: message), "key of \(key.count) bytes")
        }
    }

    // MARK: - AWS signing test suite

    func testAWSSigningTestSuite() throws {
        let cases = try loadVectors(Self.vectors + "/aws-signing-test-suite-v4.json")
        // A vector that silently disappears must fail the test, not shrink it.
        XCTAssertEqual(cases.count, 36)
        XCTAssertEqual(Set(cases.map(\.name)).count, cases.count)
        for vector in cases {
            let name = vector.name
            let context = vector.context
            let parsed = try ParsedRequest(vector.request)
            XCTAssertTrue(parsed.signerHeaders.isEmpty, name)
            let payload = try SHA256Hasher.digest(parsed.body).hex
            var request = SigV4Request(
                method: parsed.method, host: parsed.host, path: parsed.path, query: parsed.query,
                headers: parsed.headers, payloadSHA256: payload)
            // aws-c-auth's sign_body also sends and signs the body hash as a header.
            if context.signBody { request.headers.append(("x-amz-content-sha256", payload)) }
            let signer = SigV4Signer(credentials: context.credentials, region: context.region, service: context.service)
            let date = try context.date()
            let normalize = context.normalize

            XCTAssertEqual(signer.canonicalRequest(request, date: date, normalizePath: normalize, doubleEncodePath: true),
                           vector.canonicalRequest, "\(name): canonical request")
            XCTAssertEqual(signer.stringToSign(request, date: date, normalizePath: normalize, doubleEncodePath: true),
                           vector.stringToSign, "\(name): string to sign")
            let added = try signer.sign(request, date: date, normalizePath: normalize, doubleEncodePath: true)
            var expectedNames = ["Authorization", "X-Amz-Date"]
            if context.credentials.sessionToken != nil { expectedNames.append("X-Amz-Security-Token") }
            XCTAssertEqual(added.map(\.0), expectedNames, name)
            XCTAssertEqual(value(added, "Authorization"), vector.authorization, "\(name): Authorization")
            XCTAssertEqual(value(added, "X-Amz-Date"), "20150830T123600Z", name)
            XCTAssertEqual(value(added, "X-Amz-Security-Token"), context.credentials.sessionToken, name)
        }
    }

    // MARK: - S3 API reference examples

    func testS3SingleChunkExamples() throws {
        let cases = try loadVectors(Self.vectors + "/s3-single-chunk.json")
        XCTAssertEqual(cases.map(\.name), ["get-object", "put-object", "get-bucket-lifecycle", "get-bucket-list-objects"])
        for vector in cases {
            let name = vector.name
            let context = vector.context
            let parsed = try ParsedRequest(vector.request)
            let payload = try SHA256Hasher.digest(parsed.body).hex
            // The page's request carries the body hash it computed; ours must agree.
            XCTAssertEqual(parsed.signerHeaders["x-amz-content-sha256"], payload, name)
            let request = SigV4Request(
                method: parsed.method, host: parsed.host, path: parsed.path, query: parsed.query,
                headers: parsed.headers, payloadSHA256: payload)
            let signer = SigV4Signer(credentials: context.credentials, region: context.region)
            let date = try context.date()

            XCTAssertEqual(signer.canonicalRequest(request, date: date), vector.canonicalRequest, "\(name): canonical request")
            XCTAssertEqual(signer.stringToSign(request, date: date), vector.stringToSign, "\(name): string to sign")
            let added = try signer.sign(request, date: date)
            XCTAssertEqual(added.map(\.0), ["Authorization", "X-Amz-Date", "X-Amz-Content-Sha256"], name)
            let authorization = try XCTUnwrap(value(added, "Authorization"), name)
            XCTAssertEqual(String(authorization.split(separator: "=").last ?? ""), try XCTUnwrap(vector.signature, name), "\(name): signature")
            let published = vector.authorization
                .replacingOccurrences(of: ",SignedHeaders=", with: ", SignedHeaders=")
                .replacingOccurrences(of: ",Signature=", with: ", Signature=")
            XCTAssertEqual(authorization, published, "\(name): Authorization")
            XCTAssertEqual(value(added, "X-Amz-Date"), parsed.signerHeaders["x-amz-date"], name)
            XCTAssertEqual(value(added, "X-Amz-Content-Sha256"), parsed.signerHeaders["x-amz-content-sha256"], name)
        }
    }

    func testPutObjectExamplePathIsTheEncodedKey() throws {
        let putObject = try XCTUnwrap(try loadVectors(Self.vectors + "/s3-single-chunk.json").first { $0.name == "put-object" })
        XCTAssertEqual(try ParsedRequest(putObject.request).path, "/" + s3EncodedPath("test$file.text"))
    }

    // MARK: - S3 paths

    func testS3EncodedPath() {
        let cases: [(key: String, encoded: String)] = [
            ("models/my model.gguf", "models/my%20model.gguf"),
            ("a+b", "a%2Bb"),
            ("~user/file-1_2.v3.gguf", "~user/file-1_2.v3.gguf"),
            ("caf\u{e9}.zip", "caf%C3%A9.zip"),
            // A decomposed é is other bytes, so another key: nothing is normalised.
            ("cafe\u{301}.zip", "cafe%CC%81.zip"),
            ("日本/モデル.gguf", "%E6%97%A5%E6%9C%AC/%E3%83%A2%E3%83%87%E3%83%AB.gguf"),
            ("a//b", "a//b"),
            ("a/./b", "a/./b"),
            ("a/../b", "a/../b"),
            ("/leading/", "/leading/"),
            ("100%", "100%25"),
            ("a%20b", "a%2520b"),
            ("k=v&x?y#z", "k%3Dv%26x%3Fy%23z"),
            ("!*'()$,;:@", "%21%2A%27%28%29%24%2C%3B%3A%40"),
            ("", ""),
        ]
        for testCase in cases {
            XCTAssertEqual(s3EncodedPath(testCase.key), testCase.encoded, "key \(testCase.key.debugDescription)")
        }
    }

    func testS3PathsAreSignedExactlyAsGiven() throws {
        let signer = SigV4Signer(credentials: Self.s3Credentials, region: "us-east-1")
        let date = Date(timeIntervalSince1970: 1_767_323_045)  // 2026-01-02T03:04:05Z
        for key in ["a//b", "a/./b", "a/../b", "my key+1.bin", "日本/é"] {
            let path = "/bucket/" + s3EncodedPath(key)
            let request = SigV4Request(method: "GET", host: "127.0.0.1:9000", path: path, payloadSHA256: "UNSIGNED-PAYLOAD")
            let lines = signer.canonicalRequest(request, date: date).components(separatedBy: "\n")
            XCTAssertEqual(lines[1], path, "key \(key.debugDescription)")
            _ = try signer.sign(request, date: date)
        }
        XCTAssertTrue(signer.canonicalRequest(
            SigV4Request(method: "GET", host: "h", path: "/bucket/a//b", payloadSHA256: "UNSIGNED-PAYLOAD"), date: date)
            .contains("\n/bucket/a//b\n"))

        // Signing another spelling of the path gives another signature.
        func authorization(_ path: String) throws -> String? {
            value(try signer.sign(SigV4Request(method: "GET", host: "h", path: path, payloadSHA256: "UNSIGNED-PAYLOAD"), date: date), "Authorization")
        }
        XCTAssertNotEqual(try authorization("/bucket/a//b"), try authorization("/bucket/a/b"))
        XCTAssertNotEqual(try authorization("/bucket/a/./b"), try authorization("/bucket/a/b"))
    }

    // Canonical request written by hand and signed with Python's hashlib/hmac (not
    // libcrypto), for a path with "//", "/./" and encoded bytes, a port in Host, and a body.
    func testS3SignatureOverUnnormalisedPathMatchesIndependentComputation() throws {
        let signer = SigV4Signer(credentials: Self.s3Credentials, region: "us-east-1")
        let date = Date(timeIntervalSince1970: 1_767_323_045)
        let body = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"  // SHA-256 of "hello"
        XCTAssertEqual(try SHA256Hasher.digest(Array("hello".utf8)).hex, body)
        let path = "/models/" + s3EncodedPath("a//b/./c d+é")
        XCTAssertEqual(path, "/models/a//b/./c%20d%2B%C3%A9")
        let request = SigV4Request(
            method: "PUT", host: "127.0.0.1:9000", path: path,
            headers: [("Content-Type", "application/octet-stream")], payloadSHA256: body)
        XCTAssertEqual(signer.canonicalRequest(request, date: date), """
            PUT
            /models/a//b/./c%20d%2B%C3%A9

            content-type:application/octet-stream
            host:127.0.0.1:9000
            x-amz-content-sha256:\(body)
            x-amz-date:20260102T030405Z

            content-type;host;x-amz-content-sha256;x-amz-date
            \(body)
            """)
        XCTAssertEqual(signer.stringToSign(request, date: date), """
            AWS4-HMAC-SHA256
            20260102T030405Z
            20260102/us-east-1/s3/aws4_request
            11308fa712bcb2206e81aee0ea214dd5618611227a03c80f962d65f3575d4996
            """)
        XCTAssertEqual(value(try signer.sign(request, date: date), "Authorization"),
                       "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20260102/us-east-1/s3/aws4_request, "
                       + "SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date, "
                       + "Signature=c80373d1cd5d8455098ddafc1642f059962a7780fb055fb8c1afaa064393da1c")
    }

    // MARK: - Canonical pieces

    func testCanonicalQueryEncodesAndSorts() {
        XCTAssertEqual(SigV4Signer.canonicalQuery([
            ("prefix", "models/a b+c"), ("list-type", "2"), ("a", "="), ("uploads", ""), ("k", "b"), ("k", "a"), ("é", "~"),
        ]), "%C3%A9=~&a=%3D&k=a&k=b&list-type=2&prefix=models%2Fa%20b%2Bc&uploads=")
        XCTAssertEqual(SigV4Signer.canonicalQuery([]), "")
    }

    func testCanonicalURIForOtherServices() {
        let cases: [(path: String, normalised: String, doubleEncoded: String)] = [
            ("/a/b/../c/./d/", "/a/c/d/", "/a/b/../c/./d/"),
            ("/..", "/", "/.."),
            ("/a/b/..", "/a/", "/a/b/.."),
            ("//a///b", "/a/b", "//a///b"),
            ("/a%20b/c", "/a%20b/c", "/a%2520b/c"),
            ("", "/", "/"),
        ]
        for testCase in cases {
            XCTAssertEqual(SigV4Signer.canonicalURI(testCase.path, normalize: true, doubleEncode: false), testCase.normalised, testCase.path)
            XCTAssertEqual(SigV4Signer.canonicalURI(testCase.path, normalize: false, doubleEncode: true), testCase.doubleEncoded, testCase.path)
            XCTAssertEqual(SigV4Signer.canonicalURI(testCase.path, normalize: false, doubleEncode: false), testCase.path.isEmpty ? "/" : testCase.path)
        }
    }

    func testAmzDateIsUTCWholeSeconds() {
        XCTAssertEqual(SigV4Signer.amzDate(Date(timeIntervalSince1970: 0)), "19700101T000000Z")
        XCTAssertEqual(SigV4Signer.amzDate(Date(timeIntervalSince1970: 1_369_353_600.999)), "20130524T000000Z")
        XCTAssertEqual(SigV4Signer.amzDate(Date(timeIntervalSince1970: 1_767_323_045)), "20260102T030405Z")
        XCTAssertEqual(SigV4Signer.amzDate(Date(timeIntervalSince1970: 4_102_444_799)), "20991231T235959Z")
    }

    func testHeaderValuesAreTrimmedAndRepeatsJoined() {
        let signer = SigV4Signer(credentials: Self.s3Credentials, region: "us-east-1", service: "service")
        let request = SigV4Request(
            method: "GET", host: "example.amazonaws.com", path: "/",
            headers: [("X-B", "  two   words\t\there  "), ("x-a", "1"), ("X-A", " 2 "), ("x-c", "")],
            payloadSHA256: "UNSIGNED-PAYLOAD")
        XCTAssertEqual(signer.canonicalRequest(request, date: Date(timeIntervalSince1970: 0)), """
            GET
            /

            host:example.amazonaws.com
            x-a:1,2
            x-amz-date:19700101T000000Z
            x-b:two words here
            x-c:

            host;x-a;x-amz-date;x-b;x-c
            UNSIGNED-PAYLOAD
            """)
    }

    // MARK: - Refusals

    func testSignRefusesRequestsItCannotSignFaithfully() {
        let signer = SigV4Signer(credentials: Self.s3Credentials, region: "us-east-1")
        let good = SigV4Request(method: "PUT", host: "examplebucket.s3.amazonaws.com", path: "/k", payloadSHA256: "UNSIGNED-PAYLOAD")
        XCTAssertNoThrow(try signer.sign(good, date: Date()))

        var refused: [(String, SigV4Request)] = []
        func variant(_ label: String, _ change: (inout SigV4Request) -> Void) {
            var request = good
            change(&request)
            refused.append((label, request))
        }
        variant("raw space in an S3 path") { $0.path = "/bucket/my key" }
        variant("raw non-ASCII in an S3 path") { $0.path = "/bucket/é" }
        variant("bad escape") { $0.path = "/bucket/100%" }
        variant("relative path") { $0.path = "test.txt" }
        variant("line break in a header value") { $0.headers = [("x-amz-meta-a", "1\r\nx-amz-acl: public-read")] }
        variant("header name with a space") { $0.headers = [("Bad Name", "1")] }
        variant("header the signer sets") { $0.headers = [("X-Amz-Date", "20130524T000000Z")] }
        variant("Host in the headers") { $0.headers = [("host", "examplebucket.s3.amazonaws.com")] }
        variant("Authorization in the headers") { $0.headers = [("Authorization", "x")] }
        variant("payload hash in the headers") { $0.headers = [("x-amz-content-sha256", "UNSIGNED-PAYLOAD")] }
        variant("uppercase payload hash") { $0.payloadSHA256 = String(repeating: "A", count: 64) }
        variant("short payload hash") { $0.payloadSHA256 = "abc" }
        variant("host with a path") { $0.host = "example.com/evil" }
        variant("empty method") { $0.method = "" }
        for (label, request) in refused {
            XCTAssertThrowsError(try signer.sign(request, date: Date()), label) { error in
                XCTAssertFalse(String(describing: error).contains(Self.s3Credentials.secretAccessKey), label)
            }
        }

        // The path check belongs to S3's signing; doubly encoded paths are encoded by the signer.
        var raw = good
        raw.path = "/example space/"
        XCTAssertNoThrow(try signer.sign(raw, date: Date(), doubleEncodePath: true))

        XCTAssertThrowsError(try SigV4Signer(credentials: Self.s3Credentials, region: "us/east", service: "s3").sign(good, date: Date()))
        XCTAssertThrowsError(try SigV4Signer(credentials: AWSCredentials(accessKeyID: "AK ID", secretAccessKey: "s"), region: "r").sign(good, date: Date()))
        XCTAssertThrowsError(try SigV4Signer(credentials: AWSCredentials(accessKeyID: "AKID", secretAccessKey: ""), region: "r").sign(good, date: Date()))
        XCTAssertThrowsError(try SigV4Signer(credentials: AWSCredentials(accessKeyID: "AKID", secretAccessKey: "s", sessionToken: "a\nb"), region: "r").sign(good, date: Date()))
    }

    func testEmptySessionTokenIsNoToken() throws {
        let signer = SigV4Signer(credentials: AWSCredentials(accessKeyID: "AKID", secretAccessKey: "secret", sessionToken: ""), region: "us-east-1")
        let request = SigV4Request(method: "GET", host: "h", path: "/", payloadSHA256: "UNSIGNED-PAYLOAD")
        XCTAssertEqual(try signer.sign(request, date: Date()).map(\.0), ["Authorization", "X-Amz-Date", "X-Amz-Content-Sha256"])
        XCTAssertFalse(signer.canonicalRequest(request, date: Date()).contains("x-amz-security-token"))
    }

    // MARK: - Credentials never print their secrets

    func testCredentialsNeverPrintSecretOrToken() throws {
        let secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
        let token = "FwoGZXIvYXdzEJr//////////wEaDEXAMPLETOKEN+abc/def=="
        let credentials = AWSCredentials(accessKeyID: "ASIAIOSFODNN7EXAMPLE", secretAccessKey: secret, sessionToken: token)
        XCTAssertEqual(credentials.description, "AWSCredentials(accessKeyID: ASIA…, secretAccessKey: <redacted>, sessionToken: <redacted>)")
        XCTAssertEqual(credentials.debugDescription, credentials.description)
        XCTAssertEqual(AWSCredentials(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: secret).description,
                       "AWSCredentials(accessKeyID: AKIA…, secretAccessKey: <redacted>)")

        var dumped = ""
        dump(credentials, to: &dumped)
        let signer = SigV4Signer(credentials: credentials, region: "us-east-1")
        var dumpedSigner = ""
        dump(signer, to: &dumpedSigner)
        let renderings = [
            credentials.description, credentials.debugDescription,
            String(describing: credentials), String(reflecting: credentials), "\(credentials)",
            String(describing: [credentials]), String(reflecting: Optional(credentials)),
            dumped, String(describing: signer), String(reflecting: signer), dumpedSigner,
        ]
        for text in renderings {
            XCTAssertFalse(text.contains("ASIAIOSFODNN7EXAMPLE"), text)
            // No 6-character piece of either secret, so partial leaks fail too.
            for secretText in [secret, token] {
                let characters = Array(secretText)
                for start in 0...(characters.count - 6) {
                    let piece = String(characters[start..<start + 6])
                    XCTAssertFalse(text.contains(piece), "\(piece) leaked in \(text)")
                }
            }
        }
        XCTAssertNotEqual(credentials, AWSCredentials(accessKeyID: "ASIAIOSFODNN7EXAMPLE", secretAccessKey: secret))
        XCTAssertEqual(credentials, AWSCredentials(accessKeyID: "ASIAIOSFODNN7EXAMPLE", secretAccessKey: secret, sessionToken: token))
    }

    // MARK: - Helpers

    private static let s3Credentials = AWSCredentials(
        accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")

    private func value(_ headers: [(String, String)], _ name: String) -> String? {
        headers.first { $0.0 == name }?.1
    }

    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// One published case: the request and its context, and the expected results.
    private struct Vector: Decodable {
        let name: String
        let context: Context
        let request: String
        let canonicalRequest: String
        let stringToSign: String
        let signature: String?
        let authorization: String

        enum CodingKeys: String, CodingKey {
            case name, context, request, signature, authorization
            case canonicalRequest = "canonical_request", stringToSign = "string_to_sign"
        }
    }

    private struct VectorSet: Decodable {
        let source: String
        let cases: [Vector]
    }

    private struct Context: Decodable {
        let credentials: AWSCredentials
        let region: String
        let service: String
        let timestamp: String
        let normalize: Bool
        let signBody: Bool

        enum CodingKeys: String, CodingKey {
            case credentials, region, service, timestamp, normalize, signBody = "sign_body"
        }

        enum CredentialKeys: String, CodingKey {
            case accessKeyID = "access_key_id", secretAccessKey = "secret_access_key", token
        }

        init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let credentials = try container.nestedContainer(keyedBy: CredentialKeys.self, forKey: .credentials)
            self.credentials = AWSCredentials(
                accessKeyID: try credentials.decode(String.self, forKey: .accessKeyID),
                secretAccessKey: try credentials.decode(String.self, forKey: .secretAccessKey),
                sessionToken: try credentials.decodeIfPresent(String.self, forKey: .token))
            region = try container.decode(String.self, forKey: .region)
            service = try container.decode(String.self, forKey: .service)
            timestamp = try container.decode(String.self, forKey: .timestamp)
            normalize = try container.decodeIfPresent(Bool.self, forKey: .normalize) ?? false
            signBody = try container.decodeIfPresent(Bool.self, forKey: .signBody) ?? false
        }

        func date() throws -> Date {
            try XCTUnwrap(ISO8601DateFormatter().date(from: timestamp), "timestamp \(timestamp)")
        }
    }

    private func loadVectors(_ path: String) throws -> [Vector] {
        try JSONDecoder().decode(VectorSet.self, from: Data(contentsOf: URL(fileURLWithPath: path))).cases
    }
}

/// A request in the test suites' text form: `METHOD TARGET HTTP/1.1`, `Name:value`
/// header lines, a blank line, the body. Headers the signer produces (Authorization,
/// X-Amz-Date, X-Amz-Content-Sha256) are set aside in `signerHeaders`.
private struct ParsedRequest {
    var method = ""
    var host = ""
    var path = ""
    var query: [(String, String)] = []
    var headers: [(String, String)] = []
    var signerHeaders: [String: String] = [:]
    var body: [UInt8] = []

    init(_ text: String) throws {
        let parts = text.components(separatedBy: "\n\n")
        body = Array(parts.dropFirst().joined(separator: "\n\n").utf8)
        var lines = parts[0].components(separatedBy: "\n").filter { !$0.isEmpty }
        let requestLine = lines.removeFirst()
        // The target may contain spaces (get-space): it runs from the first space to the last.
        let first = try XCTUnwrap(requestLine.firstIndex(of: " "))
        let last = try XCTUnwrap(requestLine.lastIndex(of: " "))
        method = String(requestLine[..<first])
        let target = String(requestLine[requestLine.index(after: first)..<last])
        if let mark = target.firstIndex(of: "?") {
            path = String(target[..<mark])
            for item in target[target.index(after: mark)...].split(separator: "&") {
                let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = String(pair[0]), value = pair.count > 1 ? String(pair[1]) : ""
                query.append((name.removingPercentEncoding ?? name, value.removingPercentEncoding ?? value))
            }
        } else {
            path = target
        }
        for line in lines {
            let colon = try XCTUnwrap(line.firstIndex(of: ":"), line)
            let name = String(line[..<colon])
            let value = String(line[line.index(after: colon)...])
            switch name.lowercased() {
            case "host": host = value.trimmingCharacters(in: .whitespaces)
            case "authorization", "x-amz-date", "x-amz-content-sha256":
                signerHeaders[name.lowercased()] = value.trimmingCharacters(in: .whitespaces)
            default: headers.append((name, value))
            }
        }
    }
}
