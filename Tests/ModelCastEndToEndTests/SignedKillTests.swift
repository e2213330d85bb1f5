import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// Issue 24, item 2: a signed publish, rollback, resign and promote killed (SIGKILL) just
/// before each of its writes, on a directory (an LD_PRELOAD library kills the process
/// before its Nth rename, link or unlink inside the target). After every kill, `verify`
/// either passes or names the mismatch and how it heals; the next command (here a prune that removes nothing) puts the live pair right
/// before anything else, and stock `minisign` and `verify` accept the live manifest.
///
/// The same sweep on an object store runs in process on the in-memory store, killed after
/// the Nth write (SignedKillLogicTests); here the real SIGKILL of a process on a directory.
///
/// Issue 44, item 5: in the window a kill before the manifest write leaves (the next
/// release's signature beside the live manifest), a device that requires signatures
/// accepts the live manifest with the signature its release kept beside its history
/// record, and `verify` says so as a warning (exit 0; `--strict` fails it).
final class SignedKillTests: XCTestCase {
    struct Keys {
        let publicKey: String, secretKey: String, base64: String
    }

    func keygen(_ scratch: Scratch) throws -> Keys {
        let result = try modelcast(["keygen", "--unencrypted", "--public-key", scratch.at("k.pub"), "--secret-key", scratch.at("k.key")])
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = try String(contentsOfFile: scratch.at("k.pub"), encoding: .utf8).split(separator: "\n")
        return Keys(publicKey: scratch.at("k.pub"), secretKey: scratch.at("k.key"), base64: String(lines[1]))
    }

    /// The operations under test, for a target and its base URL.
    func operations(_ target: String, keys: Keys, work: Scratch) throws -> [(name: String, arguments: [String])] {
        let file = try work.write("in/4.bin", patternBytes(3000, seed: 44))
        return [
            ("publish", ["publish", "m=" + file, "--version", "4.0.0", "--base-url", "https://cdn.example.com/k", "--to", target, "--sign", keys.secretKey]),
            ("rollback", ["rollback", target, "--version", "1.0.0", "--sign", keys.secretKey]),
            ("resign", ["resign", target, "--sign", keys.secretKey]),
            ("promote", ["promote", target, "--from", "beta", "--to", "stable", "--sign", keys.secretKey]),
        ]
    }

    /// Signed 1.0.0 and 2.0.0 on stable, 3.0.0 on beta.
    func publishBaseline(_ target: String, keys: Keys, work: Scratch, environment: [String: String]?) throws {
        for (version, channel) in [("1.0.0", "stable"), ("2.0.0", "stable"), ("3.0.0", "beta")] {
            let file = try work.write("in/\(version).bin", patternBytes(3000, seed: UInt32(version.first!.asciiValue!)))
            let result = try modelcast(["publish", "m=" + file, "--version", version, "--base-url", "https://cdn.example.com/k", "--to", target,
                                        "--sign", keys.secretKey, "--channel", channel], environment: environment)
            XCTAssertEqual(result.status, 0, result.stderr)
        }
    }

    /// Runs modelcast in the background with `environment`, returning the process.
    func start(_ arguments: [String], environment: [String: String], logs: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: modelcastBinary)
        process.arguments = arguments
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        _ = FileManager.default.createFile(atPath: logs, contents: nil)
        process.standardOutput = FileHandle(forWritingAtPath: logs)
        process.standardError = FileHandle(forWritingAtPath: logs)
        try process.run()
        return process
    }

    func waitForExit(_ process: Process, timeout: TimeInterval = 120) {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
    }

    /// After a kill: a mismatched live pair (stock minisign refuses it) is named by
    /// `verify` with how it heals, as a warning since devices accept the live manifest
    /// with the signature its release kept (`device`, when given, shows one does); the
    /// next command repairs it; minisign accepts the pair.
    /// Returns whether the kill had left the pair mismatched.
    @discardableResult
    func checkAfterKill(_ label: String, target: String, keys: Keys, environment: [String: String]?,
                        livePair: () async throws -> (manifest: String, signature: String), device: ((String) throws -> Void)? = nil) async throws -> Bool {
        func minisignAccepts() async throws -> Bool {
            let pair = try await livePair()
            return try runProcess("/usr/bin/env", ["minisign", "-Vm", pair.manifest, "-x", pair.signature, "-P", keys.base64]).status == 0
        }
        let mismatched = try await !minisignAccepts()
        if mismatched {
            let before = try modelcast(["verify", target, "--public-key", keys.publicKey], environment: environment)
            let said = before.stdout + before.stderr
            XCTAssertEqual(before.status, 0, "\(label): devices accept the live manifest with its kept signature, so verify warns:\n\(said)")
            XCTAssertTrue(said.contains("Devices that require a signature accept the manifest with the signature its release kept beside its history record")
                          && said.contains("puts the live manifest's signature back"),
                          "\(label): verify names a mismatched pair, what devices do and how it heals:\n\(said)")
            let strict = try modelcast(["verify", target, "--public-key", keys.publicKey, "--strict"], environment: environment)
            XCTAssertEqual(strict.status, 1, "\(label): --strict fails the warning:\n\(strict.stdout)\(strict.stderr)")
            try device?(label)
        }
        let next = try modelcast(["prune", target, "--keep", "100"], environment: environment)
        XCTAssertEqual(next.status, 0, "\(label): the next command runs:\n\(next.stderr)")
        let accepted = try await minisignAccepts()
        XCTAssertTrue(accepted, "\(label): after the next command, minisign accepts the live pair:\n\(next.stderr)")
        if mismatched {
            let after = try modelcast(["verify", target, "--public-key", keys.publicKey], environment: environment)
            XCTAssertEqual(after.status, 0, "\(label): verify after the next command:\n\(after.stdout)\(after.stderr)")
        }
        return mismatched
    }

    /// A device that requires signatures (`modelcast-device --check`, over `modelcast serve`
    /// of the directory `target`) accepts its live manifest: the sequence it plans for is the
    /// live manifest's.
    func deviceAccepts(_ target: String, keys: Keys, directory: String, label: String) throws {
        let port = try freeLoopbackPort()
        let server = try BackgroundProcess(modelcastBinary, ["serve", target, "--port", String(port), "--base-path", "/k"])
        XCTAssertTrue(server.firstLine.contains("127.0.0.1:\(port)"), server.firstLine)
        let live = try Release.decode(Data(contentsOf: URL(fileURLWithPath: target + "/manifest.json")), source: target)
        let device = try runProcess(modelcastBinary.replacingOccurrences(of: "/modelcast", with: "/modelcast-device"),
                                    ["--check", "--manifest", "http://127.0.0.1:\(port)/k/manifest.json", "--dir", directory, "--public-key", keys.publicKey])
        XCTAssertEqual(device.status, 0, "\(label): a device refuses the live manifest: \(device.stderr)")
        XCTAssertTrue(device.stdout.hasPrefix("sequence \(live.sequence): "), "\(label): \(device.stdout)")
        withExtendedLifetime(server) {}
    }

    func testAKillBeforeEveryWriteOfASignedCommandOnADirectory() async throws {
        let work = try Scratch()
        let library = work.at("killat.so")
        let built = try runProcess("/usr/bin/env", ["clang", "-shared", "-fPIC", "-O1", "-o", library, repositoryRoot + "/Tests/Fixtures/killat.c", "-ldl"])
        XCTAssertEqual(built.status, 0, built.stderr)
        let keys = try keygen(work)
        let base = work.at("base")
        try publishBaseline(base, keys: keys, work: work, environment: nil)
        var writes: [String: Int] = [:]
        var repaired: [String: Int] = [:]
        for (index, operation) in try operations("TARGET", keys: keys, work: work).enumerated() {
            for n in 1...40 {
                let target = work.at("t\(index)-\(n)")
                XCTAssertEqual(try runProcess("/bin/cp", ["-a", base, target]).status, 0)
                var environment = ProcessInfo.processInfo.environment
                environment["LD_PRELOAD"] = library
                environment["KILLAT_ROOT"] = target
                environment["KILLAT_N"] = String(n)
                let process = try start(operation.arguments.map { $0 == "TARGET" ? target : $0 },
                                        environment: environment, logs: work.at("t\(index)-\(n).log"))
                waitForExit(process)
                let label = "\(operation.name), killed before write \(n)"
                if process.terminationReason == .exit {
                    XCTAssertEqual(process.terminationStatus, 0, "\(operation.name) ran to the end: " + ((try? String(contentsOfFile: work.at("t\(index)-\(n).log"), encoding: .utf8)) ?? ""))
                    writes[operation.name] = n - 1
                    try await checkAfterKill("\(operation.name), not killed", target: target, keys: keys, environment: nil) {
                        (target + "/manifest.json", target + "/manifest.json.minisig")
                    }
                    break
                }
                XCTAssertEqual(process.terminationStatus, SIGKILL, label)
                if try await checkAfterKill(label, target: target, keys: keys, environment: nil, livePair: {
                    (target + "/manifest.json", target + "/manifest.json.minisig")
                }, device: { label in try self.deviceAccepts(target, keys: keys, directory: work.at("device-\(index)-\(n)"), label: label) }) {
                    repaired[operation.name, default: 0] += 1
                }
                try? FileManager.default.removeItem(atPath: target)
            }
        }
        print("writes before completion (directory): \(writes)")
        for name in ["publish", "rollback", "resign", "promote"] {
            XCTAssertGreaterThanOrEqual(writes[name] ?? 0, 4, "\(name) was killed at each of its writes: \(writes)")
            XCTAssertGreaterThanOrEqual(repaired[name] ?? 0, 1, "a kill between the signature and the manifest left a pair the next command repaired: \(repaired)")
        }
    }

    /// Two signed runs racing leave an older release's signature beside a newer, signed
    /// live manifest (each writes its signature before its manifest; the one going live
    /// first was overtaken by the other's signature). The next command puts the live
    /// manifest's own kept signature back — it never takes the signature away, which would
    /// leave a signed release unsigned for every device that requires a signature.
    func testAnOlderSignatureBesideASignedManifestIsReplacedNotRemoved() throws {
        let work = try Scratch()
        let keys = try keygen(work)
        let site = work.at("site")
        for (index, version) in ["1.0.0", "2.0.0"].enumerated() {
            let model = try work.write("in/\(version).bin", patternBytes(3000, seed: UInt32(index + 1)))
            let run = try modelcast(["publish", "m=" + model, "--version", version, "--base-url", "https://cdn.example.com/k", "--to", site, "--sign", keys.secretKey],
                                    environment: pinnedEnvironment(epoch: 1_790_000_000 + index * 100))
            XCTAssertEqual(run.status, 0, run.stderr)
        }
        let own = try Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json.minisig"))
        try Data(contentsOf: URL(fileURLWithPath: site + "/manifests/00000001.json.minisig")).write(to: URL(fileURLWithPath: site + "/manifest.json.minisig"))
        let next = try modelcast(["prune", site, "--keep", "100"])
        XCTAssertEqual(next.status, 0, next.stderr)
        XCTAssertTrue(next.stderr.contains("repaired") && next.stderr.contains("(sequence 2) is back"), next.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json.minisig")), own, "the live manifest's own signature is back")
        let stock = try runProcess("/usr/bin/env", ["minisign", "-Vm", site + "/manifest.json", "-p", keys.publicKey])
        XCTAssertEqual(stock.status, 0, stock.stderr)
    }
}
