import Foundation
import NIOConcurrencyHelpers
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// When an upload fails, what the run leaves in the store because removing it failed too
/// (a multipart upload's parts, an object stored but not proven) is said, naming it,
/// besides the failure itself: nothing else would tell the user it is there.
final class S3CleanupFailureTests: XCTestCase {
    static let mib = 1 << 20

    /// An S3 target through `endpoint` that does not retry (the faults below are for good)
    /// and keeps its notes for the user in `notes`.
    func makeStorage(_ moto: MotoS3, endpoint: String, policy: S3UploadPolicy, notes: NIOLockedValueBox<[String]>) throws -> S3Storage {
        try S3Storage(
            target: S3Location("s3://\(moto.bucket)/p"),
            endpoint: S3Endpoint(endpoint: endpoint, region: "us-east-1", pathStyle: true),
            credentials: AWSCredentials(accessKeyID: moto.accessKeyID, secretAccessKey: moto.secretAccessKey), policy: policy, retries: 0,
            log: { note in notes.withLockedValue { $0.append(note) } })
    }

    /// A multipart upload whose part is refused is aborted; when the abort is refused too,
    /// its parts stay (and are billed), and the user is told which upload it is and how
    /// to remove it. The error reported is still the part's.
    func testAFailedAbortOfAMultipartUploadIsReported() async throws {
        let moto = try MotoS3()
        let work = try Scratch()
        let (proxy, endpoint) = try moto.startFaultProxy(rules: work.at("rules.json"), json: """
            [{"method": "PUT", "contains": "partNumber=2", "action": "503", "times": 99},
             {"method": "DELETE", "contains": "uploadId=", "action": "503", "times": 99}]
            """)
        defer { withExtendedLifetime(proxy) {} }
        var policy = S3UploadPolicy()
        policy.multipartThreshold = 5 << 20
        policy.partSize = 5 << 20
        let notes = NIOLockedValueBox<[String]>([])
        let storage = try makeStorage(moto, endpoint: endpoint, policy: policy, notes: notes)
        var failure: Error?
        do {
            let path = try work.write("big.bin", patternBytes(11 * Self.mib, seed: 3))
            let digest = try StreamDigester.digest(ofFileAt: path)
            let staged = StagedObject(path: path, metadata: ObjectMetadata(cacheControl: CachePolicy.immutable, contentType: "application/octet-stream",
                                                                           size: digest.size, sha256: digest.sha256), isTemporary: false)
            do {
                let outcome = try await storage.putIfAbsent("big.bin", staged: staged)
                XCTFail("part 2 was refused, yet the upload is \(outcome)")
            } catch let error as S3Error {
                XCTAssertEqual(error.operation, "UploadPart 2")
                XCTAssertEqual(error.status, 503)
            }
            let pending = try await storage.pendingUploads()
            XCTAssertEqual(pending.map(\.key), ["big.bin"], "the abort was refused: the upload is still there")
            let said = notes.withLockedValue { $0 }
            XCTAssertEqual(said.count, 1, "\(said)")
            let note = said.first ?? ""
            for part in ["s3://\(moto.bucket)/p/big.bin", pending.first?.uploadID ?? "(no upload)", "AbortMultipartUpload", "prune --abort-uploads-older-than"] {
                XCTAssertTrue(note.contains(part), "\(part) missing from: \(note)")
            }
        } catch {
            failure = error
        }
        await storage.shutdown()
        if let failure { throw failure }
    }

    /// An object stored but not proven (here the HEAD that proves it is refused, as with
    /// `--checksum none`) is removed; when the removal is refused too, the object stays
    /// under its key and the user is told. The error reported is still the proof's.
    func testAFailedRemovalOfAnUnprovenObjectIsReported() async throws {
        let moto = try MotoS3()
        let work = try Scratch()
        let (proxy, endpoint) = try moto.startFaultProxy(rules: work.at("rules.json"), json: """
            [{"method": "HEAD", "contains": "/p/r.json", "action": "503", "times": 99},
             {"method": "DELETE", "contains": "/p/r.json", "action": "503", "times": 99}]
            """)
        defer { withExtendedLifetime(proxy) {} }
        var policy = S3UploadPolicy()
        policy.checksum = .none
        let notes = NIOLockedValueBox<[String]>([])
        let storage = try makeStorage(moto, endpoint: endpoint, policy: policy, notes: notes)
        var failure: Error?
        do {
            let data = Data("{\"a\": 1}\n".utf8)
            let metadata = try ObjectMetadata(cacheControl: CachePolicy.immutable, contentType: "application/json", size: Int64(data.count),
                                              sha256: SHA256Hasher.digest(data))
            do {
                let outcome = try await storage.putIfAbsent("r.json", data: data, metadata: metadata)
                XCTFail("the HEAD proving the object was refused, yet it is \(outcome)")
            } catch let error as S3Error {
                XCTAssertEqual(error.operation, "HEAD")
                XCTAssertEqual(error.status, 503)
            }
            XCTAssertNotNil(try moto.listing()["p/r.json"], "the removal was refused: the object is still there")
            let said = notes.withLockedValue { $0 }
            XCTAssertEqual(said.count, 1, "\(said)")
            let note = said.first ?? ""
            for part in ["s3://\(moto.bucket)/p/r.json", "stays in the store"] {
                XCTAssertTrue(note.contains(part), "\(part) missing from: \(note)")
            }
        } catch {
            failure = error
        }
        await storage.shutdown()
        if let failure { throw failure }
    }
}
