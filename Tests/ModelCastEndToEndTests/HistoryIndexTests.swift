import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// The history index (`_modelcast/history-index.json`): commands read it instead of every record,
/// and a missing, stale or foreign index is detected and never trusted.
final class HistoryIndexTests: XCTestCase {
    let base = "https://cdn.example.com/m"

    func sequences(_ target: String) throws -> [Int64] {
        let history = try modelcast(["history", target, "--json"])
        XCTAssertEqual(history.status, 0, history.stderr)
        let entries = try JSONDecoder().decode(HistoryReport.self, from: Data(history.stdout.utf8)).releases
        return entries.map(\.sequence).sorted()
    }

    func indexedSequences(_ target: String) throws -> [Int64] {
        let data = try Data(contentsOf: URL(fileURLWithPath: target + "/_modelcast/history-index.json"))
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        return try XCTUnwrap(object["records"] as? [[String: Any]]).compactMap { ($0["sequence"] as? NSNumber)?.int64Value }
    }

    /// Publishes versions 1.0.0 … 1.0.(count-1) of a small model to `target`.
    func publishVersions(_ count: Int, scratch: Scratch, to target: String, environment: [String: String]? = nil) throws {
        for index in 0..<count {
            let file = try scratch.write("v\(index)/m.bin", patternBytes(500, seed: UInt32(index + 1)))
            let result = try PublishRun([file], version: "1.0.\(index)", baseURL: base, to: target, environment: environment).run()
            XCTAssertEqual(result.status, 0, result.stderr)
        }
    }

    /// A record copied under another sequence's key (`00000002.json` holding record 1, by
    /// hand or by a hostile store) crashed every command that read all records — history,
    /// rollback, report, `--rebuild-index` — on a duplicate sequence. Each now names the
    /// file and what it holds, and changes nothing; report draws the page with the reason.
    func testARecordUnderAnotherSequencesKeyIsNamedNotACrash() throws {
        let scratch = try Scratch()
        let target = scratch.at("out")
        try publishVersions(2, scratch: scratch, to: target)
        try FileManager.default.removeItem(atPath: target + "/manifests/00000002.json")
        try FileManager.default.copyItem(atPath: target + "/manifests/00000001.json", toPath: target + "/manifests/00000002.json")
        try FileManager.default.removeItem(atPath: target + "/_modelcast/history-index.json")
        let before = try snapshot(target)
        let named = "manifests/00000002.json: it holds the record of sequence 1, not of 2 as its key says"
        for arguments in [["history", target], ["history", target, "--rebuild-index"], ["rollback", target, "--version", "1.0.0"]] {
            let result = try modelcast(arguments)
            XCTAssertEqual(result.status, 1, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(named), "\(arguments): \(result.stderr)")
        }
        let report = try modelcast(["report", target, "--json"])
        XCTAssertEqual(report.status, 0, report.stderr)
        XCTAssertTrue(report.stdout.contains(named), report.stdout)
        XCTAssertEqual(try snapshot(target), before, "a refused command changed the target")
    }

    /// With no optional flag: a publish writes the index beside the records, naming each.
    func testPublishWritesTheIndex() throws {
        let scratch = try Scratch()
        let target = scratch.at("out")
        try publishVersions(3, scratch: scratch, to: target)
        XCTAssertEqual(try indexedSequences(target), [1, 2, 3])
        let history = try modelcast(["history", target])
        XCTAssertEqual(history.status, 0, history.stderr)
        XCTAssertEqual(history.stderr, "", "a current index is not mentioned")
        let verify = try modelcast(["verify", target])
        XCTAssertEqual(verify.status, 0, verify.stdout + verify.stderr)
    }

    /// A publish stopped between its record and the index (here: the index of two
    /// publishes ago put back) leaves a record the index does not name: the next publish
    /// finds it, never reuses its sequence, and writes an index naming every record.
    func testARecordNewerThanTheIndexIsFoundAndIndexed() throws {
        let scratch = try Scratch()
        let target = scratch.at("out")
        try publishVersions(2, scratch: scratch, to: target)
        let older = try Data(contentsOf: URL(fileURLWithPath: target + "/_modelcast/history-index.json"))
        let file = try scratch.write("v2/m.bin", patternBytes(500, seed: 9))
        XCTAssertEqual(try PublishRun([file], version: "1.0.2", baseURL: base, to: target).run().status, 0)
        try older.write(to: URL(fileURLWithPath: target + "/_modelcast/history-index.json"))

        let next = try scratch.write("v3/m.bin", patternBytes(500, seed: 10))
        let result = try PublishRun([next], version: "1.0.3", baseURL: base, to: target).run()
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try indexedSequences(target), [1, 2, 3, 4])
        XCTAssertEqual(try sequences(target), [1, 2, 3, 4])
    }

    /// A missing index, one whose entry does not match its SHA-256, and one copied from
    /// another target (its records are not this target's): each is detected, every
    /// record is read instead (with a warning naming the problem), and the publish writes
    /// an index that names the records that are there.
    func testMissingCorruptOrForeignIndexIsDetectedAndReplaced() throws {
        let scratch = try Scratch()
        let other = scratch.at("other")
        for index in 0..<3 {
            let file = try scratch.write("o\(index)/m.bin", patternBytes(700, seed: UInt32(50 + index)))
            XCTAssertEqual(try PublishRun([file], version: "2.0.\(index)", baseURL: base, to: other).run().status, 0)
        }
        let foreign = try Data(contentsOf: URL(fileURLWithPath: other + "/_modelcast/history-index.json"))

        let cases: [(name: String, damage: (String) throws -> Void, warning: String)] = [
            ("missing", { try FileManager.default.removeItem(atPath: $0) }, "there is no history index"),
            ("corrupt", { path in
                var text = try String(contentsOfFile: path, encoding: .utf8)
                text = text.replacingOccurrences(of: "1.0.1", with: "1.0.9")
                try text.write(toFile: path, atomically: true, encoding: .utf8)
            }, "does not match its own SHA-256"),
            ("foreign", { try foreign.write(to: URL(fileURLWithPath: $0)) }, "the live manifest matches no record the history index names"),
        ]
        for (offset, item) in cases.enumerated() {
            let target = scratch.at("out-\(item.name)")
            try publishVersions(3, scratch: scratch, to: target)
            try item.damage(target + "/_modelcast/history-index.json")
            let file = try scratch.write("next-\(offset)/m.bin", patternBytes(600, seed: UInt32(90 + offset)))
            let result = try PublishRun([file], version: "1.1.0", baseURL: base, to: target).run()
            XCTAssertEqual(result.status, 0, "\(item.name): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(item.warning), "\(item.name): \(result.stderr)")
            XCTAssertEqual(try indexedSequences(target), [1, 2, 3, 4], item.name)
            XCTAssertEqual(try sequences(target), [1, 2, 3, 4], item.name)
            // A version that went live keeps its files, index or not.
            let reuse = try PublishRun([try scratch.write("reuse-\(offset)/m.bin", patternBytes(500, seed: 77))], version: "1.0.1", baseURL: base, to: target).run()
            XCTAssertNotEqual(reuse.status, 0, "\(item.name): 1.0.1 went live with other bytes")
        }
    }

    /// A rollback acts on an older record: it reads that record from its own key, and
    /// refuses when the index holds other bytes, naming --rebuild-index; after the
    /// rebuild it goes through.
    func testRollbackConfirmsItsTargetRecordAgainstTheStore() throws {
        let scratch = try Scratch()
        let target = scratch.at("out")
        try publishVersions(3, scratch: scratch, to: target)
        let recordPath = target + "/manifests/00000001.json"
        let record = try String(contentsOfFile: recordPath, encoding: .utf8)
        let edited = record.replacingOccurrences(of: "\"channel\": \"stable\"", with: "\"channel\": \"edited\"")
        XCTAssertNotEqual(edited, record)
        try edited.write(toFile: recordPath, atomically: true, encoding: .utf8)
        let refused = try modelcast(["rollback", target, "--version", "1.0.0"])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("manifests/00000001.json") && refused.stderr.contains("--rebuild-index"), refused.stderr)
        XCTAssertEqual(try modelcast(["history", target, "--rebuild-index"]).status, 0)
        let rolled = try modelcast(["rollback", target, "--version", "1.0.0"])
        XCTAssertEqual(rolled.status, 0, rolled.stderr)
    }

    /// With nothing published, `history --rebuild-index` refuses, naming where it looked,
    /// and writes nothing.
    func testRebuildingTheIndexOfAnEmptyTargetIsRefused() throws {
        let scratch = try Scratch()
        let target = try scratch.mkdir("empty")
        let result = try modelcast(["history", target, "--rebuild-index"])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("no release history at \(target)/manifests/"), result.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: target), [])
    }

    /// `history` reads every record and says when the index does not name them;
    /// `history --rebuild-index` rewrites it; prune's index names only the kept records.
    func testHistoryReportsAndRebuildsTheIndexAndPruneKeepsItExact() throws {
        let scratch = try Scratch()
        let target = scratch.at("out")
        try publishVersions(4, scratch: scratch, to: target)
        try FileManager.default.removeItem(atPath: target + "/_modelcast/history-index.json")
        let noted = try modelcast(["history", target])
        XCTAssertEqual(noted.status, 0, noted.stderr)
        XCTAssertTrue(noted.stderr.contains("there is no history index") && noted.stderr.contains("--rebuild-index"), noted.stderr)
        let rebuilt = try modelcast(["history", target, "--rebuild-index"])
        XCTAssertEqual(rebuilt.status, 0, rebuilt.stderr)
        XCTAssertTrue(rebuilt.stderr.contains("from 4 records"), rebuilt.stderr)
        XCTAssertEqual(try indexedSequences(target), [1, 2, 3, 4])
        XCTAssertEqual(try modelcast(["history", target]).stderr, "")

        let prune = try modelcast(["prune", target, "--keep", "2"])
        XCTAssertEqual(prune.status, 0, prune.stderr)
        XCTAssertEqual(try indexedSequences(target), try sequences(target))
        XCTAssertEqual(try sequences(target), [3, 4])
    }

    /// On S3, publish, rollback, resign-free verify and an unchanged publish read the index,
    /// the next sequence's key and the live record, never the older records: the requests
    /// moto logs for them are the same with 3 and with 9 records.
    func testRequestsDoNotGrowWithTheHistoryOnS3() throws {
        let moto = try MotoS3()
        let scratch = try Scratch()
        var counts: [Int: [String: Int]] = [:]
        for records in [3, 9] {
            let target = "s3://\(moto.bucket)/h\(records)"
            try publishVersions(records, scratch: scratch, to: target, environment: moto.environment)
            func requests(_ arguments: [String]) throws -> Int {
                let before = moto.loggedRequests().count
                let result = try modelcast(arguments, environment: moto.environment)
                XCTAssertEqual(result.status, 0, "\(arguments): \(result.stderr)")
                let logged = moto.loggedRequests().dropFirst(before)
                // The live record, the next sequence's key, and a rollback's own target record.
                let allowed = arguments[0] == "rollback" ? [records - 1, records, records + 1, records + 2] : [records, records + 1, records + 2]
                let olderRecords = logged.filter { request in
                    request.method == "GET" && request.path.contains("/manifests/0000000") && !allowed.contains { request.path.hasSuffix("0\($0).json") }
                }
                XCTAssertEqual(olderRecords.map(\.path), [], "\(arguments) read older records")
                return logged.count
            }
            let last = try scratch.write("v\(records - 1)/m.bin", patternBytes(500, seed: UInt32(records)))
            var count: [String: Int] = [:]
            count["unchanged publish"] = try requests(["publish", last, "--name", "m", "--version", "1.0.\(records - 1)", "--base-url", base, "--to", target])
            count["verify"] = try requests(["verify", target])
            count["rollback"] = try requests(["rollback", target, "--version", "1.0.\(records - 2)"])
            counts[records] = count
        }
        XCTAssertEqual(counts[3], counts[9], "requests per command with 3 and with 9 records")
    }
}
