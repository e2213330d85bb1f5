import Foundation
import XCTest
import ModelCastClient
import ModelCastCore
import ModelCastTestSupport

/// An app and its extension run the client on one directory: calls from two processes
/// take turns (a lock file in the directory), so both succeed and the state stays whole.
final class SharedDirectoryTests: XCTestCase {
    let device = modelcastBinary.replacingOccurrences(of: "/modelcast", with: "/modelcast-device")

    /// Two `modelcast-device` runs started at once on one directory, for a first install
    /// and for an update: both exit 0, both print the version now installed, and the
    /// directory holds that version whole, its state naming it, nothing half-done.
    func testTwoProcessesUpdatingOneDirectoryBothSucceed() throws {
        let site = try ClientTests.Site()
        let files = [try site.work.write("v1/m.bin", patternBytes(12 << 20, seed: 1)), try site.work.write("v2/m.bin", patternBytes(12 << 20, seed: 2))]
        let shared = site.work.at("shared")
        let arguments = ["--manifest", site.base + "/manifest.json", "--dir", shared, "--public-key", site.work.at("k.pub")]
        for (index, version) in ["1.0.0", "2.0.0"].enumerated() {
            // No segment index: each version is one whole GET, so the log counts the downloads.
            try site.publish([files[index]], version: version, ["--segment-index", "never"])
            try site.start()
            let runs = try (0..<2).map { run in try Run(device, arguments, output: site.work.at("out-\(version)-\(run)")) }
            for (number, run) in runs.enumerated() {
                let (status, stdout, stderr) = run.finish()
                XCTAssertEqual(status, 0, "\(version), process \(number): \(stderr)")
                XCTAssertTrue(stdout.contains("running m \(version): models/m/current/m.bin"), "\(version), process \(number): \(stdout)")
            }
            let current = try FileManager.default.destinationOfSymbolicLink(atPath: shared + "/models/m/current")
            XCTAssertEqual(try SHA256Hasher.digest(Data(contentsOf: URL(fileURLWithPath: shared + "/models/m/current/m.bin"))).hex,
                           try SHA256Hasher.digest(Data(contentsOf: URL(fileURLWithPath: files[index]))).hex, version)
            let state = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: shared + "/state.json"))) as? [String: Any])
            let installed = try XCTUnwrap((state["installed"] as? [String: Any])?["m"] as? [String: Any])
            XCTAssertEqual(installed["version"] as? String, version)
            XCTAssertEqual("versions/" + (installed["id"] as? String ?? "?"), current)
            XCTAssertEqual((state["sequences"] as? [String: Int])?[site.base + "/manifest.json"], index + 1)
            let versions = try FileManager.default.contentsOfDirectory(atPath: shared + "/models/m/versions").sorted()
            XCTAssertEqual(versions.filter { $0.hasPrefix(".") }, [], "no staging left")
            XCTAssertEqual(versions.count, index + 1, "\(versions)")
            XCTAssertEqual((try? FileManager.default.contentsOfDirectory(atPath: shared + "/downloads")) ?? [], [], "no download left")
            let fetched = site.requests.filter { $0.hasPrefix("GET /models/models/m/\(version)/m.bin ") }
            XCTAssertEqual(fetched.count, 1, "one process downloads, the other finds it installed: \(fetched)")
        }
    }

    /// Another holder of the directory's lock (here the test, as another process would be)
    /// makes a call wait, then give up after `directoryLockTimeout` with `directoryBusy`
    /// having changed nothing; once it is released, the call goes through.
    func testACallWaitsForTheLockAtMostItsTimeout() async throws {
        let site = try ClientTests.Site()
        for (index, version) in ["1.0.0", "1.1.0"].enumerated() {
            try site.publish([try site.work.write("v\(index)/m.bin", patternBytes(20_000, seed: UInt32(index)))], version: version)
            try site.start()
            _ = try await ModelUpdater(site.configuration()).update()
        }
        var configuration = site.configuration()
        configuration.directoryLockTimeout = 0.5
        let updater = try ModelUpdater(configuration)
        let descriptor = open(site.work.at("device/state.lock"), O_RDWR)
        XCTAssertGreaterThanOrEqual(descriptor, 0)
        XCTAssertEqual(flock(descriptor, LOCK_EX | LOCK_NB), 0)
        let state = try Data(contentsOf: URL(fileURLWithPath: site.work.at("device/state.json")))
        let started = Date()
        do {
            _ = try await updater.update()
            XCTFail("updated while another holder had the lock")
        } catch let error as ClientError {
            XCTAssertEqual(error, .directoryBusy(path: site.work.at("device"), waited: 1))
        }
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.5)
        do {
            _ = try await updater.reportUnusable(model: "m", reason: "x")
            XCTFail("reverted while another holder had the lock")
        } catch let error as ClientError {
            XCTAssertEqual(error, .directoryBusy(path: site.work.at("device"), waited: 1))
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: site.work.at("device/state.json"))), state, "nothing changed")
        XCTAssertEqual(updater.installed("m")?.version, "1.1.0")
        close(descriptor)
        let reverted = try await updater.reportUnusable(model: "m", reason: "x")
        XCTAssertEqual(reverted.version, "1.0.0")
    }

    /// A `modelcast-device` run, its output in files.
    final class Run {
        let process = Process()
        let output: String

        init(_ executable: String, _ arguments: [String], output: String) throws {
            self.output = output
            FileManager.default.createFile(atPath: output + ".out", contents: nil)
            FileManager.default.createFile(atPath: output + ".err", contents: nil)
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            process.standardOutput = FileHandle(forWritingAtPath: output + ".out")
            process.standardError = FileHandle(forWritingAtPath: output + ".err")
            process.standardInput = FileHandle.nullDevice
            try process.run()
        }

        /// Waits for the run (at most a minute); its status, stdout and stderr.
        func finish() -> (Int32, String, String) {
            let deadline = Date().addingTimeInterval(60)
            while process.isRunning, Date() < deadline { usleep(20_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            while process.isRunning { usleep(10_000) }
            let read = { (suffix: String) in (try? String(contentsOfFile: self.output + suffix, encoding: .utf8)) ?? "" }
            return (process.terminationStatus, read(".out"), read(".err"))
        }
    }
}
