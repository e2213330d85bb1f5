import Foundation
import XCTest
import ModelCastTestSupport

/// `--progress` as a CI log and a terminal see it (issue 13): plain lines under a pipe,
/// a bar redrawn in place under a pty, JSON events, nothing with `none`, and stdout
/// carrying only the result whatever the mode.
final class ProgressCLITests: XCTestCase {
    static let bigSize = 300 << 20
    /// The environment without a `MODELCAST_PROGRESS` the run was started with.
    let environment = ProcessInfo.processInfo.environment.filter { $0.key != "MODELCAST_PROGRESS" }

    /// A scratch directory holding `big.bin`, ~300 MiB unless told (sparse: quick to make, read as zeros).
    func bigModel(size: Int = bigSize) throws -> Scratch {
        let scratch = try Scratch()
        let path = scratch.at("big.bin")
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: UInt64(size))
        try handle.close()
        return scratch
    }

    /// The percentage a progress line shows ("… 41% …").
    func percent(in line: Substring) -> Int? {
        line.split(separator: " ").first { $0.hasSuffix("%") }.flatMap { Int($0.dropLast()) }
    }

    /// Checks one item's lines: bounded, strictly increasing percentages, the last 100 %.
    func assertLines(_ stderr: String, label: String, file: StaticString = #filePath, line: UInt = #line) {
        let lines = stderr.split(separator: "\n").filter { $0.hasPrefix(label + " ") }
        XCTAssertFalse(lines.isEmpty, "no line for \(label) in: \(stderr)", file: file, line: line)
        XCTAssertLessThanOrEqual(lines.count, 11, "one line per 10 % and a final one: \(stderr)", file: file, line: line)
        let percents = lines.compactMap(percent(in:))
        XCTAssertEqual(percents.count, lines.count, stderr, file: file, line: line)
        XCTAssertEqual(percents, Array(Set(percents)).sorted(), "percentages strictly increase: \(stderr)", file: file, line: line)
        XCTAssertEqual(percents.last, 100, stderr, file: file, line: line)
        XCTAssertFalse(stderr.contains("\r") || stderr.contains("\u{1B}"), "plain lines carry no control characters", file: file, line: line)
    }

    func testLinesUnderAPipeAreBoundedIncreasingAndEndAt100() throws {
        let scratch = try bigModel()
        let result = try modelcast(["pack", scratch.at("big.bin"), "-o", scratch.at("out.bin"), "--progress", "lines"], environment: environment)
        XCTAssertEqual(result.status, 0, result.stderr)
        assertLines(result.stderr, label: "packing big.bin")
        XCTAssertTrue(result.stderr.contains("300.0/300.0 MiB 100% "), result.stderr)
        // stdout is the result line alone.
        let fields = result.stdout.split(separator: "\n")
        XCTAssertEqual(fields.count, 1, result.stdout)
        XCTAssertEqual(fields.first?.split(separator: "\t").count, 3, result.stdout)

        // A tree: one item for all its files, hashed several at a time.
        for index in 0..<3 {
            try FileManager.default.createDirectory(atPath: scratch.at("tree"), withIntermediateDirectories: true)
            let handle = try XCTUnwrap(FileHandle(forWritingAtPath: scratch.write("tree/part-\(index).bin", [])))
            try handle.truncate(atOffset: UInt64(64 << 20))
            try handle.close()
        }
        let tree = try modelcast(["pack", scratch.at("tree"), "--no-zip", "-o", scratch.at("listing/"), "--progress", "lines"], environment: environment)
        XCTAssertEqual(tree.status, 0, tree.stderr)
        assertLines(tree.stderr, label: "hashing tree (3 files)")
        XCTAssertEqual(tree.stdout.split(separator: "\n").count, 3, tree.stdout)
    }

    func testBarUnderAPtyRedrawsOneLine() throws {
        let scratch = try bigModel()
        // stdout goes to a file: the pty transcript is standard error alone.
        let command = "'\(modelcastBinary)' pack '\(scratch.at("big.bin"))' -o '\(scratch.at("out.bin"))' --progress bar > '\(scratch.at("stdout.txt"))'"
        let result = try runProcess("/usr/bin/script", ["-qec", command, "/dev/null"], environment: environment)
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        let transcript = result.stdout
        XCTAssertFalse(transcript.contains("\n"), "every update redraws the same line: \(transcript.debugDescription)")
        let draws = transcript.components(separatedBy: "\r").filter { $0.hasPrefix("packing big.bin [") }
        XCTAssertGreaterThanOrEqual(draws.count, 1, transcript.debugDescription)
        XCTAssertTrue(draws.allSatisfy { $0.hasSuffix("\u{1B}[K") && $0.contains("iB/s") }, transcript.debugDescription)  // MiB/s or, on a fast disk, GiB/s
        XCTAssertTrue(transcript.hasSuffix("\r\u{1B}[J"), "the bar is cleared at the end: \(transcript.debugDescription)")
        XCTAssertEqual(try String(contentsOfFile: scratch.at("stdout.txt"), encoding: .utf8).split(separator: "\t").first.map(String.init),
                       scratch.at("out.bin"))

        // auto on a terminal draws a bar (or nothing, for work done within a second), never lines.
        let auto = try runProcess("/usr/bin/script", ["-qec", command.replacingOccurrences(of: "--progress bar", with: ""), "/dev/null"], environment: environment)
        XCTAssertEqual(auto.status, 0, auto.stdout)
        XCTAssertFalse(auto.stdout.contains("\n"), auto.stdout.debugDescription)
    }

    func testJSONEventsParseAndNoneIsSilent() throws {
        let scratch = try bigModel()
        let json = try modelcast(["pack", scratch.at("big.bin"), "-o", scratch.at("out.bin"), "--progress", "json"], environment: environment)
        XCTAssertEqual(json.status, 0, json.stderr)
        let events = try json.stderr.split(separator: "\n").map { line in
            try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], String(line))
        }
        XCTAssertEqual(events.first?["event"] as? String, "start")
        XCTAssertEqual(events.first?["label"] as? String, "packing big.bin")
        XCTAssertEqual(events.first?["total"] as? Int, Self.bigSize)
        XCTAssertGreaterThan(events.filter { $0["event"] as? String == "progress" }.count, 0)
        XCTAssertLessThanOrEqual(events.count, 2 + 100 + 10, "at most every 1 % (or 1 s)")
        XCTAssertEqual(events.last?["event"] as? String, "finish")
        XCTAssertEqual(events.last?["done"] as? Int, Self.bigSize)

        let none = try modelcast(["pack", scratch.at("big.bin"), "-o", scratch.at("again.bin"), "--progress", "none"], environment: environment)
        XCTAssertEqual(none.status, 0, none.stderr)
        XCTAssertEqual(none.stderr, "")

        // $MODELCAST_PROGRESS chooses too; a bad value is a usage error naming it.
        var lines = environment
        lines["MODELCAST_PROGRESS"] = "lines"
        let fromEnvironment = try modelcast(["pack", scratch.at("big.bin"), "-o", scratch.at("env.bin")], environment: lines)
        XCTAssertEqual(fromEnvironment.status, 0, fromEnvironment.stderr)
        assertLines(fromEnvironment.stderr, label: "packing big.bin")
        lines["MODELCAST_PROGRESS"] = "loud"
        let bad = try modelcast(["pack", scratch.at("big.bin"), "-o", scratch.at("bad.bin")], environment: lines)
        XCTAssertEqual(bad.status, 2)
        XCTAssertTrue(bad.stderr.contains("MODELCAST_PROGRESS must be one of auto, bar, lines, json, none, got 'loud'"), bad.stderr)
    }

    func testJSONStdoutStaysValidWithProgressOn() throws {
        let scratch = try bigModel(size: 64 << 20)
        // --json alone shows no progress; asked for, it goes to stderr only.
        let quiet = try modelcast(["pack", scratch.at("big.bin"), "-o", scratch.at("quiet.bin"), "--json"], environment: environment)
        XCTAssertEqual(quiet.status, 0, quiet.stderr)
        XCTAssertEqual(quiet.stderr, "", "--json runs default to --progress none")
        for mode in ["lines", "json", "bar"] {
            let pack = try modelcast(["pack", scratch.at("big.bin"), "-o", scratch.at("\(mode).bin"), "--json", "--progress", mode], environment: environment)
            XCTAssertEqual(pack.status, 0, pack.stderr)
            XCTAssertNotNil(try JSONSerialization.jsonObject(with: Data(pack.stdout.utf8)) as? [String: Any], pack.stdout)
            XCTAssertTrue(pack.stderr.contains("packing big.bin"), "\(mode): \(pack.stderr)")
        }

        let site = scratch.at("site")
        let publish = try modelcast(["publish", scratch.at("big.bin"), "--version", "1.0.0", "--base-url", "https://cdn.example.com/models",
                                     "--to", site, "--json", "--progress", "lines"], environment: environment)
        XCTAssertEqual(publish.status, 0, publish.stderr)
        XCTAssertNotNil(try JSONSerialization.jsonObject(with: Data(publish.stdout.utf8)) as? [String: Any], publish.stdout)
        assertLines(publish.stderr, label: "packing big.bin")

        let verify = try modelcast(["verify", site, "--json", "--progress", "lines"], environment: environment)
        XCTAssertEqual(verify.status, 0, verify.stdout + verify.stderr)
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(verify.stdout.utf8)) as? [String: Any], verify.stdout)
        XCTAssertNotNil(report["checks"], verify.stdout)
        // The 64 MiB artifact and its segment index (published for files of 8 MiB and more).
        assertLines(verify.stderr, label: "verifying 2 objects")
    }

    func testPruneReportsWhatItDeletes() throws {
        let scratch = try Scratch()
        let site = scratch.at("site")
        for (index, version) in ["1.0.0", "1.1.0", "1.2.0", "1.3.0"].enumerated() {
            let model = try scratch.write("\(version)/m.bin", patternBytes(4096, seed: UInt32(index + 1)))
            let result = try modelcast(["publish", model, "--version", version, "--base-url", "https://cdn.example.com/models", "--to", site], environment: environment)
            XCTAssertEqual(result.status, 0, result.stderr)
        }
        // The live 1.3.0, its rollback target 1.2.0 and that record's own (1.1.0) stay; 1.0.0's artifact goes.
        let prune = try modelcast(["prune", site, "--keep", "1", "--progress", "lines"], environment: environment)
        XCTAssertEqual(prune.status, 0, prune.stderr)
        XCTAssertTrue(prune.stdout.contains(", 4096 bytes of artifacts"), prune.stdout)
        assertLines(prune.stderr, label: "deleting 1 object")
        XCTAssertFalse(prune.stdout.contains("%"), prune.stdout)
    }

    func testEveryLongCommandTakesTheOption() throws {
        var wide = environment
        wide["COLUMNS"] = "400"
        for command in ["inspect", "pack", "publish", "verify", "prune"] {
            let help = try modelcast([command, "--help"], environment: wide).stdout
            XCTAssertTrue(help.contains("--progress <MODE>") && help.contains("none with --json"), "\(command) --help: \(help)")
        }
        let bad = try modelcast(["pack", "examples/models/tiny-llm.gguf", "--progress", "loud"])
        XCTAssertEqual(bad.status, 2, bad.stderr)
    }
}
