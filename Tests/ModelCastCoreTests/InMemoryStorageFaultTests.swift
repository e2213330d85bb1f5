import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// The fake's fault injection does what the moved tests rely on: a rule fails exactly the
/// operations it names, a lost answer is what a retry would answer, a kill freezes the
/// store after the Nth write, and a hook runs a second writer between two operations.
final class InMemoryStorageFaultTests: XCTestCase {
    func metadata(_ data: Data) throws -> ObjectMetadata {
        ObjectMetadata(cacheControl: CachePolicy.immutable, contentType: "application/json", size: Int64(data.count), sha256: try SHA256Hasher.digest(data))
    }

    func testARuleFailsOnlyTheOperationsItNamesAfterItsSkip() async throws {
        let storage = try InMemoryStorage()
        storage.faults.fail(.put, keyContaining: "manifests/", skip: 1, times: 1)
        let data = Data("{}".utf8)
        let first = try await storage.putIfAbsent("manifests/1.json", data: data, metadata: try metadata(data))
        XCTAssertEqual(first, .created, "skipped")
        do {
            _ = try await storage.putIfAbsent("manifests/2.json", data: data, metadata: try metadata(data))
            XCTFail("the second matching put was not failed")
        } catch let error as S3Error {
            XCTAssertEqual(error.status, 503)
            XCTAssertEqual(ExitStatus(for: error), .io)
        }
        XCTAssertNil(storage.bucket["manifests/2.json"], "a failed put writes nothing")
        let third = try await storage.putIfAbsent("manifests/3.json", data: data, metadata: try metadata(data))
        XCTAssertEqual(third, .created, "times: 1")
        let other = try await storage.putIfAbsent("other.json", data: data, metadata: try metadata(data))
        XCTAssertEqual(other, .created, "another key")
    }

    func testALostAnswerIsWhatTheRetryAnswers() async throws {
        let storage = try InMemoryStorage()
        storage.faults.add(.put, keyContaining: "r.json", .loseAnswer)
        storage.faults.add(.replace, keyContaining: "m.json", .loseAnswer)
        let data = Data("{}".utf8)
        let outcome = try await storage.putIfAbsent("r.json", data: data, metadata: try metadata(data))
        XCTAssertEqual(outcome, .unchanged, "the retry finds the bytes there")
        XCTAssertEqual(storage.bucket.data("r.json"), data)
        do {
            try await storage.replace("m.json", data: data, metadata: try metadata(data), ifMatch: "")
            XCTFail("the retried conditional replace succeeded")
        } catch StorageError.preconditionFailed(let key, _, _) {
            XCTAssertEqual(key, "m.json")
        }
        XCTAssertEqual(storage.bucket.data("m.json"), data, "the first attempt landed")
        // A lost answer hides the creation: the writer never deletes what it cannot know it made.
        try await storage.otherWriter().replace("r.json", data: Data("[]".utf8), metadata: try metadata(Data("[]".utf8)), ifMatch: nil)
        try await storage.delete("r.json")
        XCTAssertNil(storage.bucket["r.json"], "not created by this writer as far as it knows: an unconditional delete")
    }

    func testAKillStopsEveryOperationAfterTheNthWrite() async throws {
        let storage = try InMemoryStorage()
        storage.faults.kill(afterWrites: 2)
        let data = Data("{}".utf8)
        _ = try await storage.putIfAbsent("1.json", data: data, metadata: try metadata(data))
        try await storage.replace("2.json", data: data, metadata: try metadata(data), ifMatch: nil)
        let read = try await storage.head("1.json")
        XCTAssertNotNil(read, "reads before the next write still run")
        await assertThrows(InMemoryStorage.Killed(operation: .delete, key: "1.json")) { try await storage.delete("1.json") }
        await assertThrows(InMemoryStorage.Killed(operation: .head, key: "1.json")) { _ = try await storage.head("1.json") }
        XCTAssertEqual(storage.bucket.keys, ["1.json", "2.json"])
        XCTAssertTrue(storage.faults.hasKilled)
        // Another process goes on.
        try await storage.otherWriter().delete("1.json")
        XCTAssertEqual(storage.bucket.keys, ["2.json"])
    }

    func testAHookRunsASecondWriterBetweenTwoOperations() async throws {
        let storage = try InMemoryStorage()
        let other = try storage.otherWriter()
        let data = Data("{\"a\": 1}".utf8), theirs = Data("{\"b\": 2}".utf8)
        try await storage.replace("m.json", data: data, metadata: try metadata(data), ifMatch: "")
        let etag = try await storage.head("m.json")?.etag
        let theirsMetadata = try metadata(theirs)
        storage.faults.add(.replace, key: "m.json", .before({
            try await other.replace("m.json", data: theirs, metadata: theirsMetadata, ifMatch: nil)
        }))
        do {
            try await storage.replace("m.json", data: data, metadata: try metadata(data), ifMatch: etag)
            XCTFail("a stale replace went through")
        } catch StorageError.preconditionFailed {}
        XCTAssertEqual(storage.bucket.data("m.json"), theirs)
        XCTAssertEqual(storage.bucket.log.map { "\($0.writer) \($0.operation.rawValue)" }, ["A replace", "A head", "A replace", "B replace"])
    }
}
