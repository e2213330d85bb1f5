import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// What a pipeline relies on (issue 11, cases 13–16): documented exit statuses, a JSON
/// error object on stdout with --json, JSON output that matches its schema, and help
/// text that says each thing once.
final class CLIContractTests: XCTestCase {
    let base = "https://cdn.example.com/models"
    let gguf = "examples/models/tiny-llm.gguf"

    /// Checks `documents` (JSON text) against `schema/cli/NAME`; fails naming the first invalid one.
    func validate(_ documents: [String], against name: String, file: StaticString = #filePath, line: UInt = #line) throws {
        try validateAgainstSchema(documents, name, file: file, line: line)
    }

    // MARK: 13. Exit statuses

    func testExitStatusesFollowTheDocumentedTable() throws {
        let site = try Scratch()
        XCTAssertEqual(try modelcast([]).status, 2, "no command is a usage error")
        let version = try modelcast(["--version"])
        XCTAssertEqual(version.status, 0)
        XCTAssertEqual(version.stdout.trimmingCharacters(in: .newlines), ModelCastVersion.current)
        XCTAssertEqual(try modelcast(["--help"]).status, 0)
        XCTAssertEqual(try modelcast(["publish", "--bogus"]).status, 2, "an unknown option is a usage error")
        XCTAssertEqual(try modelcast(["publish", gguf, "--version", "1.0.0", "--profile", "android", "--base-url", base, "--to", site.path]).status, 2)
        XCTAssertEqual(try modelcast(["inspect"]).status, 2, "a missing argument is a usage error")

        XCTAssertEqual(try modelcast(["publish", gguf, "--version", "1.1.0", "--base-url", base, "--to", site.path]).status, 0)
        XCTAssertEqual(try modelcast(["publish", gguf, "--version", "1.0.0", "--base-url", base, "--to", site.path]).status, 1, "a lower version is refused")
        XCTAssertEqual(try modelcast(["inspect", "examples/models/missing.gguf"]).status, 3, "a missing model is a file that cannot be read (docs/output.md)")
        XCTAssertEqual(try modelcast(["verify", site.path]).status, 0)
        try FileManager.default.removeItem(atPath: site.at("models"))
        XCTAssertEqual(try modelcast(["verify", site.path]).status, 1, "a failed check")

        // I/O: the target cannot be created (a file stands where its parent directory should be).
        let blocker = try site.write("blocker", [1])
        let io = try modelcast(["publish", gguf, "--version", "1.0.0", "--base-url", base, "--to", blocker + "/site"])
        XCTAssertEqual(io.status, 3, io.stderr)
        // Every command × every kind of failure, a store's included: ExitStatusTableCLITests.
    }

    /// A bound that must be positive names the value given.
    func testVerifyTimeoutsNameTheValue() throws {
        for (flag, value) in [("--timeout", "-1"), ("--request-timeout", "0")] {
            let result = try modelcast(["verify", "https://cdn.example.com/m/manifest.json", "\(flag)=\(value)"])
            XCTAssertEqual(result.status, 2, result.stderr)
            XCTAssertTrue(result.stderr.contains("\(flag) must be positive, got \(value)"), result.stderr)
        }
    }

    // MARK: 14. --json errors are JSON on stdout

    func testJSONErrorsAreAnObjectOnStdout() throws {
        let site = try Scratch()
        var outputs: [String] = []
        for (arguments, code) in [(["inspect", "examples/models/missing.gguf", "--json"], 3),
                                  (["publish", "--bogus", "--json"], 2),
                                  (["publish", gguf, "--version", "x", "--base-url", base, "--to", site.path, "--json"], 1),
                                  (["verify", "https://cdn.example.com/m/manifest.json", "--json", "--state", site.at("no/such/dir/state.json"), "--timeout", "nope"], 2)] {
            let result = try modelcast(arguments)
            XCTAssertEqual(result.status, Int32(code), "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.hasPrefix("Error: ") || result.stderr.contains("Error: "), "the human line stays on stderr: \(result.stderr)")
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(arguments): \(result.stdout)")
            let error = try XCTUnwrap(object["error"] as? [String: Any])
            XCTAssertEqual(error["code"] as? Int, code)
            XCTAssertFalse((error["message"] as? String ?? "").isEmpty)
            outputs.append(result.stdout)
        }
        try validate(outputs, against: "error.schema.json")
    }

    // MARK: 15. --json output: typed values, each matching its schema

    func testEveryJSONOutputMatchesItsSchema() throws {
        let site = try Scratch(), out = try Scratch()
        let inspect = try modelcast(["inspect", gguf, "--json"])
        let details = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(inspect.stdout.utf8)) as? [String: Any])?["details"] as? [String: Any])
        XCTAssertEqual(details["tensors"] as? Int, 2, "numbers are JSON numbers: \(inspect.stdout)")
        XCTAssertEqual(details["gguf_version"] as? Int, 3)
        XCTAssertEqual(details["architecture"] as? String, "llama")
        try validate([inspect.stdout, try modelcast(["inspect", "examples/models/TinyClassifier.mlpackage", "--json"]).stdout], against: "inspect.schema.json")
        try validate([try modelcast(["pack", gguf, "--json", "--out", out.path + "/"]).stdout,
                      try modelcast(["pack", "examples/models/TinyClassifier.mlpackage", "--json", "--out", out.path + "/"]).stdout,
                      try modelcast(["pack", "examples/models/TinyClassifier.mlpackage", "--no-zip", "--json", "--out", out.path + "/"]).stdout], against: "pack.schema.json")

        let first = try modelcast(["publish", gguf, "--version", "1.0.0", "--base-url", base, "--to", site.path, "--json"])
        let second = try modelcast(["publish", gguf, "--version", "1.1.0", "--base-url", base, "--to", site.path, "--json"])
        let unchanged = try modelcast(["publish", gguf, "--version", "1.1.0", "--base-url", base, "--to", site.path, "--json"])
        let dry = try modelcast(["publish", gguf, "--version", "1.2.0", "--base-url", base, "--to", site.path, "--json", "--dry-run"])
        let rollback = try modelcast(["rollback", site.path, "--version", "1.0.0", "--json"])
        let resign = try modelcast(["resign", site.path, "--expires-in", "30d", "--json"])
        let tree = try modelcast(["publish", "examples/models/TinyClassifier.mlpackage", "--no-zip", "--version", "1.0.0", "--base-url", base, "--to", site.path + "-tree", "--json"])
        defer { try? FileManager.default.removeItem(atPath: site.path + "-tree") }
        for result in [first, second, unchanged, dry, rollback, resign, tree] { XCTAssertEqual(result.status, 0, result.stderr) }
        try validate([first, second, unchanged, dry, rollback, resign, tree].map(\.stdout), against: "publish-report.schema.json")
        try validate([try modelcast(["history", site.path, "--json"]).stdout], against: "history.schema.json")
        try validate([try modelcast(["verify", site.path, "--json"]).stdout], against: "verify-report.schema.json")
        try validate([try modelcast(["prune", site.path, "--keep", "1", "--dry-run", "--json"]).stdout,
                      try modelcast(["prune", site.path, "--keep", "1", "--json"]).stdout], against: "prune-report.schema.json")
    }

    // MARK: 16. Help says each thing once, and rollback's names explain themselves

    func testHelpListsEachOptionOnceWithItsDefaultOnce() throws {
        for command in ["inspect", "pack", "publish", "verify", "rollback", "promote", "rollout", "rollout set", "rollout simulate", "prune", "history", "report", "resign", "keygen", "serve"] {
            var environment = ProcessInfo.processInfo.environment
            environment["COLUMNS"] = "400"
            let help = try modelcast(command.split(separator: " ").map(String.init) + ["--help"], environment: environment)
            XCTAssertEqual(help.status, 0)
            XCTAssertFalse(help.stdout.contains("Show the version"), "\(command): --version is the top level's only")
            let blocks = help.stdout.components(separatedBy: "\n  -")
            for block in blocks {
                XCTAssertLessThanOrEqual(block.components(separatedBy: "(default:").count - 1 + block.components(separatedBy: "(default ").count - 1, 1,
                                         "\(command): a default said twice: \(block)")
            }
            // Hand-aligned discussion lines stay within 80 columns, so wrapping never eats their indentation.
            let discussion = help.stdout.components(separatedBy: "USAGE:").first ?? ""
            for line in discussion.split(separator: "\n") where line.hasPrefix("  ") {
                XCTAssertLessThanOrEqual(line.count, 80, "\(command): an indented help line wider than 80 columns: \(line)")
            }
        }
        let publish = try modelcast(["publish", "--help"]).stdout
        XCTAssertEqual(publish.components(separatedBy: "--version <version>").count - 1, 1, publish)
    }

    func testRollbackTakesVersionAndStillAcceptsTheOldSpelling() throws {
        let site = try Scratch()
        XCTAssertEqual(try modelcast(["publish", gguf, "--version", "1.0.0", "--base-url", base, "--to", site.path]).status, 0)
        XCTAssertEqual(try modelcast(["publish", gguf, "--version", "1.1.0", "--base-url", base, "--to", site.path]).status, 0)
        let old = try modelcast(["rollback", site.path, "--to", "1.0.0", "--dry-run"])
        XCTAssertEqual(old.status, 0, old.stderr)
        XCTAssertTrue(old.stderr.contains("rollback --to VERSION is deprecated"), old.stderr)
        XCTAssertTrue(old.stderr.contains("--version 1.0.0"), old.stderr)
        let missing = try modelcast(["rollback", site.path])
        XCTAssertEqual(missing.status, 2)
        XCTAssertTrue(missing.stderr.contains("--version"), missing.stderr)
        let rollback = try modelcast(["rollback", site.path, "--version", "1.0.0"])
        XCTAssertEqual(rollback.status, 0, rollback.stderr)
        XCTAssertTrue(rollback.stdout.hasPrefix("rolled back to 1.0.0"), rollback.stdout)
    }
}
