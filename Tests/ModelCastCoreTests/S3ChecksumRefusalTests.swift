import Foundation
import XCTest
@testable import ModelCastCore

/// What a publish says when a store answers 400 to its checksum headers: the option that
/// fits the refusal. No request is sent (the error is made from an answer).
final class S3ChecksumRefusalTests: XCTestCase {
    /// The message `S3Client.error` makes of `response` (the client is shut down after).
    func message(_ response: S3Response, operation: String, sendsChecksums: Bool = true) async throws -> String {
        let client = S3Client(endpoint: try S3Endpoint(endpoint: "http://127.0.0.1:9", region: "us-east-1", pathStyle: true), bucket: "b",
                              credentials: AWSCredentials(accessKeyID: "id", secretAccessKey: "secret"), retries: 0, sendsChecksums: sendsChecksums)
        let message = client.error(response, operation: operation, key: "k").message
        await client.shutdown()
        return message
    }

    func answer(_ code: String, _ message: String) -> S3Response {
        S3Response(status: 400, headers: [:], body: Data("<Error><Code>\(code)</Code><Message>\(message)</Message></Error>".utf8))
    }

    /// LocalStack 4.0 (measured) answers CreateMultipartUpload with CRC64NVME so: it knows
    /// SHA-256 checksums, so the way on is `--checksum sha256`, not going without.
    func testAnUnknownAlgorithmPointsToSHA256() async throws {
        let localStack = answer("InvalidRequest", "Checksum algorithm provided is unsupported. Please try again with any of the valid types: [CRC32, CRC32C, SHA1, SHA256]")
        let message = try await message(localStack, operation: "CreateMultipartUpload")
        XCTAssertTrue(message.contains("--checksum sha256"), message)
        XCTAssertTrue(message.hasPrefix("Checksum algorithm provided is unsupported."), message)
    }

    /// Backblaze B2 refuses the headers themselves: `--checksum none`.
    func testARefusedHeaderPointsToNone() async throws {
        let b2 = answer("InvalidArgument", "Unsupported header 'x-amz-checksum-sha256' received for this API call.")
        let message = try await message(b2, operation: "PutObject")
        XCTAssertTrue(message.contains("--checksum none"), message)
        XCTAssertFalse(message.contains("--checksum sha256"), message)
    }

    /// A run that sent no checksum header gets no hint about them.
    func testNoHintWithoutChecksumHeaders() async throws {
        let message = try await message(answer("InvalidRequest", "Checksum algorithm provided is unsupported."), operation: "PutObject", sendsChecksums: false)
        XCTAssertFalse(message.contains("--checksum"), message)
    }
}
