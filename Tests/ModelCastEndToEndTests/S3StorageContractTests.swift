import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// The storage contract (`StorageContract`) on S3 (moto, signatures checked): the
/// in-memory fake's object-store semantics (`StorageContractTests`) are S3's.
final class S3StorageContractTests: XCTestCase {
    func testS3KeepsTheContract() async throws {
        let moto = try MotoS3()
        let scratch = try Scratch()
        func writer() throws -> S3Storage {
            try S3Storage(target: S3Location("s3://\(moto.bucket)/contract"),
                          endpoint: S3Endpoint(endpoint: moto.endpoint, region: "us-east-1", pathStyle: true),
                          credentials: AWSCredentials(accessKeyID: moto.accessKeyID, secretAccessKey: moto.secretAccessKey))
        }
        let storage = try writer(), other = try writer()
        var failure: Error?
        do {
            try await StorageContract(storage: storage, otherWriter: other, etags: .contentMD5, proof: .storeChecksum,
                                      deleteIsConditional: true, scratch: scratch).checkAll()
        } catch {
            failure = error
        }
        await storage.shutdown()
        await other.shutdown()
        if let failure { throw failure }
    }
}
