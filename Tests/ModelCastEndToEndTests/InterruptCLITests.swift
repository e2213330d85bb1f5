import Foundation
import XCTest
import ModelCastTestSupport

/// Issue 25, item 8: Ctrl-C (SIGINT) or SIGTERM during a publish prints one line saying
/// whether anything went live and how to go on, removes what the run staged, and ends
/// by the signal (a shell shows 130 or 143). Before the manifest's history record is
/// written the target is left exactly as it was; from then on the signal waits for the
/// manifest, so a release is never left half-committed.
final class InterruptCLITests: XCTestCase {
    private func start(_ arguments: [String], environment: [String: String], log: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: modelcastBinary)
        process.arguments = arguments
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: log)
        try process.run()
        return process
    }

    private func waitForExit(_ process: Process, timeout: TimeInterval = 120) {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
    }

    /// The one line an interrupted run prints, checked; returns it.
    @discardableResult
    private func interruptLine(_ log: String, signal: Int32, label: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        let lines = text.split(separator: "\n").filter { $0.contains("interrupted") }
        XCTAssertEqual(lines.count, 1, "\(label): one line about the interruption:\n\(text)", file: file, line: line)
        let found = String(lines.first ?? "")
        XCTAssertTrue(found.contains(signal == SIGINT ? "SIGINT" : "SIGTERM"), "\(label): names the signal: \(found)", file: file, line: line)
        XCTAssertFalse(text.contains("Fatal error") || text.contains("backtrace"), "\(label):\n\(text)", file: file, line: line)
        return found
    }

    private func stagingLeft(in directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.contains("modelcast-staging") || $0.contains("modelcast-s3-staging") }
    }

    func testAnInterruptAtEveryWriteOfAPublishOnADirectory() throws {
        let work = try Scratch()
        let library = work.at("killat.so")
        let built = try runProcess("/usr/bin/env", ["clang", "-shared", "-fPIC", "-O1", "-o", library, repositoryRoot + "/Tests/Fixtures/killat.c", "-ldl"])
        XCTAssertEqual(built.status, 0, built.stderr)
        let gguf = repositoryRoot + "/examples/models/tiny-llm.gguf"
        let baseURL = "https://cdn.example.com/m"
        let models = try work.mkdir("models")
        // Two new models (bytes the baseline does not hold), so the run stores two objects.
        let first = try work.write("models/a.bin", patternBytes(3 << 20, seed: 7))
        let second = try work.write("models/b.bin", patternBytes(2 << 20, seed: 8))
        _ = models
        let runs = try work.mkdir("runs")
        let base = runs + "/base"
        XCTAssertEqual(try modelcast(["publish", gguf, "--version", "1.0.0", "--base-url", baseURL, "--to", base]).status, 0)
        let baseline = try snapshot(base)

        var sawBeforeCommit = 0, sawDuringCommit = 0
        for n in 1...40 {
            let signal = n % 2 == 1 ? SIGINT : SIGTERM
            let target = runs + "/t\(n)"
            XCTAssertEqual(try runProcess("/bin/cp", ["-a", base, target]).status, 0)
            var environment = ProcessInfo.processInfo.environment
            environment["LD_PRELOAD"] = library
            environment["KILLAT_ROOT"] = target
            environment["KILLAT_N"] = String(n)
            environment["KILLAT_SIGNAL"] = signal == SIGINT ? "INT" : "TERM"
            let log = work.at("t\(n).log")
            let process = try start(["publish", "tiny-llm=\(gguf)", "a=\(first)", "b=\(second)", "--version", "2.0.0", "--base-url", baseURL, "--to", target],
                                    environment: environment, log: log)
            waitForExit(process)
            let label = "interrupted before write \(n)"
            XCTAssertEqual(stagingLeft(in: runs), [], "\(label): the staging directory is removed")
            if process.terminationReason == .exit {
                XCTAssertEqual(process.terminationStatus, 0, "ran to the end: " + ((try? String(contentsOfFile: log, encoding: .utf8)) ?? ""))
                XCTAssertGreaterThan(n, 3, "the run writes two objects, a record and a manifest at least")
                break
            }
            XCTAssertEqual(process.terminationStatus, signal, "\(label): ends by the signal (130/143 in a shell)")
            let line = interruptLine(log, signal: signal, label: label)
            if line.contains("nothing went live") {
                sawBeforeCommit += 1
                XCTAssertTrue(line.contains("run the same command again"), "\(label): how to go on: \(line)")
                XCTAssertEqual(try snapshot(target), baseline, "\(label): the target is left exactly as it was")
            } else {
                // The record was being written: the signal waited for the manifest.
                sawDuringCommit += 1
                XCTAssertTrue(line.contains("went live"), "\(label): \(line)")
                let verify = try modelcast(["verify", target])
                XCTAssertEqual(verify.status, 0, "\(label): the release that went live is whole:\n\(verify.stdout)")
                XCTAssertTrue(try String(contentsOfFile: target + "/manifest.json", encoding: .utf8).contains("\"2.0.0\""), label)
            }
            try? FileManager.default.removeItem(atPath: target)
        }
        XCTAssertGreaterThanOrEqual(sawBeforeCommit, 2, "interrupted before each of the two objects")
        XCTAssertGreaterThanOrEqual(sawDuringCommit, 1, "interrupted during the commit")
    }

    func testAnInterruptedPublishToS3LeavesTheBucketAndNoStaging() throws {
        let moto = try MotoS3()
        let work = try Scratch()
        let gguf = repositoryRoot + "/examples/models/tiny-llm.gguf"
        let baseURL = "https://cdn.example.com/m"
        XCTAssertEqual(try modelcast(["publish", gguf, "--version", "1.0.0", "--base-url", baseURL, "--to", "s3://models/p"], environment: moto.environment).status, 0)
        let before = try moto.listing()
        let model = try work.write("a.bin", patternBytes(7 << 20, seed: 9))
        for (index, signal) in [SIGINT, SIGTERM].enumerated() {
            // Hold the model's upload at the proxy, then interrupt the run while it waits.
            let rules = work.at("rules\(index).json")
            let (proxy, endpoint) = try moto.startFaultProxy(rules: rules, json: #"[{"methods": ["PUT", "POST"], "contains": "/p/models/", "action": "hold:go"}]"#)
            let temporary = try work.mkdir("tmp\(index)")
            var environment = moto.environment
            environment["AWS_ENDPOINT_URL"] = endpoint
            environment["TMPDIR"] = temporary
            let log = work.at("s3-\(index).log")
            let process = try start(["publish", "tiny-llm=\(gguf)", "a=\(model)", "--version", "2.0.\(index)", "--base-url", baseURL, "--to", "s3://models/p"],
                                    environment: environment, log: log)
            let deadline = Date().addingTimeInterval(60)
            while !FileManager.default.fileExists(atPath: rules + ".go.waiting") && process.isRunning && Date() < deadline { usleep(20_000) }
            XCTAssertTrue(FileManager.default.fileExists(atPath: rules + ".go.waiting"), (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
            kill(process.processIdentifier, signal)
            waitForExit(process, timeout: 30)
            FileManager.default.createFile(atPath: rules + ".go", contents: nil)
            let label = "S3, \(signal == SIGINT ? "SIGINT" : "SIGTERM") during the upload"
            XCTAssertEqual(process.terminationReason, .uncaughtSignal, label)
            XCTAssertEqual(process.terminationStatus, signal, label)
            let line = interruptLine(log, signal: signal, label: label)
            XCTAssertTrue(line.contains("nothing went live") && line.contains("run the same command again"), "\(label): \(line)")
            XCTAssertEqual(stagingLeft(in: temporary), [], "\(label): the local staging is removed")
            withExtendedLifetime(proxy) {}
        }
        // No manifest, record or index changed; at most the held object, which no release names.
        let after = try moto.listing()
        for key in Set(before.keys).union(after.keys) where !key.hasPrefix("p/models/") {
            XCTAssertEqual(after[key], before[key], key)
        }
        // And the next run goes on from there.
        XCTAssertEqual(try modelcast(["publish", "tiny-llm=\(gguf)", "a=\(model)", "--version", "2.0.0", "--base-url", baseURL, "--to", "s3://models/p"], environment: moto.environment).status, 0)
    }
}
