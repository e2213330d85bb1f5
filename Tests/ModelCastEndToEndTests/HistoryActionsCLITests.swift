import Foundation
import XCTest
import ModelCastTestSupport

/// Issue 25, item 12: `history` hid rollouts, halts, promotions and rollbacks (after
/// `rollout --halt` it showed the candidate as live while every device ran the
/// fallback) and named no channel. Each release now says what it did, the live one what
/// devices get, and `history --json` is an object with the channel and the releases.
final class HistoryActionsCLITests: XCTestCase {
    func testHistoryShowsWhatEachReleaseDidAndWhatDevicesGet() throws {
        let work = try Scratch()
        let site = work.at("site")
        let gguf = repositoryRoot + "/examples/models/tiny-llm.gguf"
        let v11 = try work.write("v11.gguf", Array(try Data(contentsOf: URL(fileURLWithPath: gguf))) + [1])
        let v12 = try work.write("v12.gguf", Array(try Data(contentsOf: URL(fileURLWithPath: gguf))) + [2])
        let base = ["--base-url", "https://cdn.example.com/m", "--to", site]
        func run(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws {
            let result = try modelcast(arguments)
            XCTAssertEqual(result.status, 0, "\(arguments): \(result.stderr)", file: file, line: line)
        }
        try run(["publish", "tiny-llm=\(gguf)", "--version", "1.0.0"] + base)                       // 1
        try run(["publish", "tiny-llm=\(v11)", "--version", "1.1.0", "--rollout", "10%"] + base)      // 2
        try run(["rollout", site, "--halt"])                                                         // 3

        // Halted: the candidate's record is the live manifest, but every device runs sequence 1.
        let halted = try modelcast(["history", site])
        XCTAssertEqual(halted.status, 0, halted.stderr)
        let haltedLive = try XCTUnwrap(halted.stdout.split(separator: "\n").first { $0.contains(" live ") }, halted.stdout)
        XCTAssertTrue(haltedLive.contains("rollout halted") && haltedLive.contains("every device on sequence 1"), halted.stdout)

        try run(["rollout", site, "--percent", "50"])                                               // 4
        try run(["rollout", site, "--complete"])                                                    // 5
        try run(["rollback", site, "--version", "1.0.0"])                                           // 6
        try run(["publish", "tiny-llm=\(v12)", "--version", "1.2.0", "--channel", "beta"] + base)    // beta 1
        try run(["promote", site, "--from", "beta", "--to", "stable"])                              // 7

        let text = try modelcast(["history", site])
        XCTAssertEqual(text.status, 0, text.stderr)
        let lines = text.stdout.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.first?.contains("channel stable") ?? false, "names the channel: \(text.stdout)")
        func row(_ sequence: Int) -> String {
            lines.first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("\(sequence) ") } ?? ""
        }
        let expected: [(Int, String)] = [
            (1, "published"), (2, "rollout started at 10%"), (3, "rollout halted"), (4, "rollout at 50%"),
            (5, "rollout completed"), (6, "rolled back to sequence 1"), (7, "promoted from channel beta (sequence 1)"),
        ]
        for (sequence, action) in expected {
            XCTAssertTrue(row(sequence).contains(action), "sequence \(sequence) should say '\(action)':\n\(text.stdout)")
        }

        // JSON: an object with the channel and the releases, each with its action.
        let json = try modelcast(["history", site, "--json"])
        XCTAssertEqual(json.status, 0, json.stderr)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], json.stdout)
        XCTAssertEqual(object["channel"] as? String, "stable")
        XCTAssertEqual(object["manifest_key"] as? String, "manifest.json")
        let releases = try XCTUnwrap(object["releases"] as? [[String: Any]])
        XCTAssertEqual(releases.map { $0["sequence"] as? Int }, [7, 6, 5, 4, 3, 2, 1])
        XCTAssertEqual(releases.map { $0["action"] as? String }, ["promote", "rollback", "rollout-complete", "rollout", "rollout-halt", "rollout", "publish"])
        XCTAssertEqual((releases[4]["rollout"] as? [String: Any])?["percent"] as? Double, 0)
        let beta = try modelcast(["history", site, "--channel", "beta", "--json"])
        XCTAssertEqual((try JSONSerialization.jsonObject(with: Data(beta.stdout.utf8)) as? [String: Any])?["channel"] as? String, "beta")
        try validateAgainstSchema([json.stdout, beta.stdout], "history.schema.json")
    }

    /// An unreadable other channel was skipped without a word (`try?`), so a promotion
    /// read as a plain publish; now `history` says which channel it could not read.
    func testAChannelThatCannotBeReadIsNamed() throws {
        let work = try Scratch()
        let site = work.at("site")
        let gguf = repositoryRoot + "/examples/models/tiny-llm.gguf"
        let base = ["--base-url", "https://cdn.example.com/m", "--to", site]
        for arguments in [["publish", "tiny-llm=\(gguf)", "--version", "1.0.0", "--channel", "beta"] + base,
                          ["promote", site, "--from", "beta", "--to", "stable"]] {
            let result = try modelcast(arguments)
            XCTAssertEqual(result.status, 0, "\(arguments): \(result.stderr)")
        }
        let betaManifest = site + "/channels/beta/manifest.json"
        XCTAssertTrue(FileManager.default.fileExists(atPath: betaManifest))
        // Larger than any manifest modelcast reads (16 MiB): beta's state cannot be read.
        try FileManager.default.removeItem(atPath: betaManifest)
        XCTAssertTrue(FileManager.default.createFile(atPath: betaManifest, contents: nil))
        try FileHandle(forWritingAtPath: betaManifest).map { try $0.truncate(atOffset: 17 << 20); try $0.close() }
        let history = try modelcast(["history", site])
        XCTAssertEqual(history.status, 0, history.stderr)
        XCTAssertTrue(history.stderr.contains("warning: channel beta (\(site)/channels/beta/manifest.json) could not be read"), history.stderr)
        XCTAssertTrue(history.stdout.contains("published"), history.stdout)
    }
}
