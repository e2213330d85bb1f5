import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// The history index (`_modelcast/history-index.json`) on the in-memory store: commands
/// read it instead of every record, and a missing, stale or foreign index is detected and
/// never trusted. Moved from HistoryIndexTests (which keeps the `history` command's own
/// output and a crash-free refusal through the CLI).
final class HistoryIndexLogicTests: XCTestCase {
    let base = "https://cdn.example.com/m"
    let indexKey = "_modelcast/history-index.json"

    /// The sequences the index names.
    func indexedSequences(_ bucket: InMemoryBucket) throws -> [Int64] {
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: XCTUnwrap(bucket.data(indexKey))) as? [String: Any])
        return try XCTUnwrap(object["records"] as? [[String: Any]]).compactMap { ($0["sequence"] as? NSNumber)?.int64Value }
    }

    /// Publishes versions PREFIX.0 … PREFIX.(count-1) of a small model, `size` bytes each.
    func publishVersions(_ count: Int, scratch: Scratch, to storage: InMemoryStorage, prefix: String = "1.0", size: Int = 500, seed: UInt32 = 1) async throws {
        for index in 0..<count {
            let file = try scratch.write("\(prefix)-v\(index)/m.bin", patternBytes(size, seed: seed + UInt32(index)))
            try await TargetCommands(storage).publish([file], version: "\(prefix).\(index)", baseURL: base, epoch: 1_790_000_000 + index)
        }
    }

    /// A missing index, one whose entry does not match its SHA-256, and one copied from
    /// another target (its records are not this target's): each is detected, every record
    /// is read instead (with a warning naming the problem), and the publish writes an index
    /// that names the records that are there. A version that went live keeps its files.
    /// (Was HistoryIndexTests.testMissingCorruptOrForeignIndexIsDetectedAndReplaced.)
    func testMissingCorruptOrForeignIndexIsDetectedAndReplaced() async throws {
        let scratch = try Scratch()
        let other = try InMemoryStorage()
        try await publishVersions(3, scratch: scratch, to: other, prefix: "2.0", size: 700, seed: 50)
        let foreign = try XCTUnwrap(other.bucket.data(indexKey))
        let cases: [(name: String, damage: (InMemoryBucket) throws -> Void, warning: String)] = [
            ("missing", { $0.remove(self.indexKey) }, "there is no history index"),
            ("corrupt", { bucket in
                let text = String(decoding: try XCTUnwrap(bucket.data(self.indexKey)), as: UTF8.self).replacingOccurrences(of: "1.0.1", with: "1.0.9")
                bucket.set(self.indexKey, Data(text.utf8), contentType: "application/json")
            }, "does not match its own SHA-256"),
            ("foreign", { $0.set(self.indexKey, foreign, contentType: "application/json") }, "the live manifest matches no record the history index names"),
        ]
        for (offset, item) in cases.enumerated() {
            let storage = try InMemoryStorage()
            try await publishVersions(3, scratch: scratch, to: storage)
            try item.damage(storage.bucket)
            let file = try scratch.write("next-\(offset)/m.bin", patternBytes(600, seed: UInt32(90 + offset)))
            let commands = TargetCommands(storage)
            let report = try await commands.publish([file], version: "1.1.0", baseURL: base, epoch: 1_790_000_100)
            XCTAssertEqual(report.sequence, 4, item.name)
            XCTAssertTrue(report.warnings.contains { $0.contains(item.warning) }, "\(item.name): \(report.warnings)")
            XCTAssertEqual(try indexedSequences(storage.bucket), [1, 2, 3, 4], item.name)
            let history = try await commands.history()
            XCTAssertEqual(history.map(\.sequence).sorted(), [1, 2, 3, 4], item.name)
            // A version that went live keeps its files, index or not.
            let reuse = try scratch.write("reuse-\(offset)/m.bin", patternBytes(500, seed: 77))
            do {
                try await commands.publish([reuse], version: "1.0.1", baseURL: base, epoch: 1_790_000_200)
                XCTFail("\(item.name): 1.0.1 went live with other bytes")
            } catch ModelCastError.versionConflict {}
        }
    }

    /// A publish stopped between its record and the index (here: the index of two
    /// publishes ago put back) leaves a record the index does not name: the next publish
    /// finds it, never reuses its sequence, and writes an index naming every record.
    /// (Was HistoryIndexTests.testARecordNewerThanTheIndexIsFoundAndIndexed.)
    func testARecordNewerThanTheIndexIsFoundAndIndexed() async throws {
        let scratch = try Scratch()
        let storage = try InMemoryStorage()
        try await publishVersions(2, scratch: scratch, to: storage)
        let older = try XCTUnwrap(storage.bucket.data(indexKey))
        let third = try scratch.write("v2/m.bin", patternBytes(500, seed: 9))
        try await TargetCommands(storage).publish([third], version: "1.0.2", baseURL: base, epoch: 1_790_000_010)
        storage.bucket.set(indexKey, older, contentType: "application/json")
        let next = try scratch.write("v3/m.bin", patternBytes(500, seed: 10))
        let report = try await TargetCommands(storage).publish([next], version: "1.0.3", baseURL: base, epoch: 1_790_000_020)
        XCTAssertEqual(report.sequence, 4)
        XCTAssertEqual(try indexedSequences(storage.bucket), [1, 2, 3, 4])
        let history = try await TargetCommands(storage).history()
        XCTAssertEqual(history.map(\.sequence).sorted(), [1, 2, 3, 4])
    }

    /// A rollback acts on an older record: it reads that record from its own key, and
    /// refuses when the index holds other bytes, naming the record and --rebuild-index;
    /// after the rebuild it goes through. (Was HistoryIndexTests.testRollbackConfirmsItsTargetRecordAgainstTheStore.)
    func testRollbackConfirmsItsTargetRecordAgainstTheStore() async throws {
        let scratch = try Scratch()
        let storage = try InMemoryStorage()
        try await publishVersions(3, scratch: scratch, to: storage)
        let record = String(decoding: try XCTUnwrap(storage.bucket.data("manifests/00000001.json")), as: UTF8.self)
        let edited = record.replacingOccurrences(of: "\"channel\": \"stable\"", with: "\"channel\": \"edited\"")
        XCTAssertNotEqual(edited, record)
        storage.bucket.set("manifests/00000001.json", Data(edited.utf8), contentType: "application/json")
        let before = storage.bucket.snapshot
        let commands = TargetCommands(storage)
        do {
            try await commands.rollback(to: "1.0.0", epoch: 1_790_000_100)
            XCTFail("the rollback trusted an index that disagrees with the record")
        } catch {
            XCTAssertEqual(ExitStatus(for: error), .refused)
            XCTAssertTrue("\(error)".contains("manifests/00000001.json") && "\(error)".contains("--rebuild-index"), "\(error)")
        }
        XCTAssertEqual(storage.bucket.snapshot, before, "a refused rollback writes nothing")
        try await commands.rebuildIndex()
        let rolled = try await commands.rollback(to: "1.0.0", epoch: 1_790_000_100)
        XCTAssertEqual(rolled.sequence, 4)
    }

    /// On an object store, publish (unchanged), verify and rollback read the index, the
    /// next sequence's key and the live record, never the older records: the operations
    /// they send are the same with 3 and with 9 records.
    /// (Was HistoryIndexTests.testRequestsDoNotGrowWithTheHistoryOnS3, which counted moto's log.)
    func testOperationsDoNotGrowWithTheHistory() async throws {
        let scratch = try Scratch()
        var counts: [Int: [String: Int]] = [:]
        for records in [3, 9] {
            let storage = try InMemoryStorage()
            try await publishVersions(records, scratch: scratch, to: storage, prefix: "1.\(records)")
            func operations(_ name: String, allowed: [Int], _ run: (TargetCommands) async throws -> Void) async throws -> Int {
                let runner = try storage.otherWriter(name)
                let before = storage.bucket.log.count
                try await run(TargetCommands(runner))
                let logged = storage.bucket.log.dropFirst(before)
                let olderRecords = logged.filter { entry in
                    entry.operation == .get && entry.key.hasPrefix("manifests/0000000") && !allowed.contains { entry.key.hasSuffix(String(format: "%08d.json", $0)) }
                }
                XCTAssertEqual(olderRecords.map(\.key), [], "\(name) read older records")
                return logged.count
            }
            let last = scratch.at("1.\(records)-v\(records - 1)/m.bin")
            var count: [String: Int] = [:]
            // The live record, the next sequence's key, and a rollback's own target record.
            count["unchanged publish"] = try await operations("publish", allowed: [records, records + 1, records + 2]) {
                let report = try await $0.publish([last], version: "1.\(records).\(records - 1)", baseURL: self.base, epoch: 1_790_000_100)
                XCTAssertTrue(report.unchanged)
            }
            count["verify"] = try await operations("verify", allowed: [records, records + 1, records + 2]) {
                let report = try await $0.verify()
                XCTAssertEqual(report.failures, 0)
            }
            count["rollback"] = try await operations("rollback", allowed: [records - 1, records, records + 1, records + 2]) {
                try await $0.rollback(to: "1.\(records).\(records - 2)", epoch: 1_790_000_100)
            }
            counts[records] = count
        }
        XCTAssertEqual(counts[3], counts[9], "operations per command with 3 and with 9 records")
    }
}
