import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// The storage contract (`StorageContract`) on the in-memory fake, in both of its
/// semantics, and on a real directory: the fake the commit, prune, rollback and history
/// tests run on behaves as the stores it stands for. The same contract runs on S3 (moto)
/// in `S3StorageContractTests`.
final class StorageContractTests: XCTestCase {
    func testTheInMemoryObjectStoreKeepsTheContract() async throws {
        let scratch = try Scratch()
        let storage = try InMemoryStorage()
        try await StorageContract(storage: storage, otherWriter: try storage.otherWriter(), etags: .contentMD5, proof: .storeChecksum,
                                  deleteIsConditional: true, scratch: scratch).checkAll()
    }

    func testTheInMemoryDirectoryKeepsTheContract() async throws {
        let scratch = try Scratch()
        let storage = try InMemoryStorage(bucket: InMemoryBucket(etagRule: .perWrite), semantics: .directory)
        try await StorageContract(storage: storage, otherWriter: try storage.otherWriter(), etags: .perWrite, proof: .hashed,
                                  deleteIsConditional: false, scratch: scratch).checkAll()
    }

    func testADirectoryKeepsTheContract() async throws {
        let scratch = try Scratch()
        let root = try scratch.mkdir("target")
        try await StorageContract(storage: DirectoryStorage(root: root), otherWriter: DirectoryStorage(root: root), etags: .perWrite, proof: .hashed,
                                  deleteIsConditional: false, scratch: scratch).checkAll()
    }

    /// Without checksums (`--checksum none`), an object is proven by reading it back, or
    /// by its size when trusted; head reports no SHA-256.
    func testWithoutChecksumsProofReadsTheBytes() async throws {
        let storage = try InMemoryStorage(checksums: false)
        let bytes = Data(patternBytes(100))
        let digest = try SHA256Hasher.digest(bytes)
        _ = try await storage.putIfAbsent("a.bin", data: bytes, metadata: ObjectMetadata(cacheControl: CachePolicy.immutable, contentType: "application/octet-stream", size: 100, sha256: digest))
        let info = try await storage.head("a.bin")
        XCTAssertNil(info?.sha256)
        let hashed = try await storage.proveContent("a.bin", size: 100, sha256: digest, localFile: nil, trustStored: false)
        XCTAssertEqual(hashed, .hashed)
        let trusted = try await storage.proveContent("a.bin", size: 100, sha256: digest, localFile: nil, trustStored: true)
        XCTAssertEqual(trusted, .trustedSize)
    }
}
