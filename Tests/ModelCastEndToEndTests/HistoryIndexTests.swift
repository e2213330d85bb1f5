import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// The history index (`_modelcast/history-index.json`): commands read it instead of every record,
/// and a missing, stale or foreign index is detected and never trusted. These keep what the
/// CLI prints (history's notes, --rebuild-index, a duplicate record named, not a crash); the
/// index logic itself (damaged or stale indexes replaced, a rollback confirming its record,
/// operations that do not grow with the history) runs in process: HistoryIndexLogicTests.
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
}
