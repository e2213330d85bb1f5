import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// Issue 24, item 2, on the in-memory object store: a signed publish, rollback, resign and
/// promote stopped for good just before each of its writes (`kill(afterWrites:)`: nothing
/// after it reaches the store, no undo step included). After every kill, verify either
/// passes or names the mismatched pair as a warning (exit 0; `--strict` fails it) with how
/// it heals; the next command (a prune that removes nothing) puts the live pair right, and
/// minisign's verification accepts the live manifest. Moved from
/// SignedKillTests.testAKillBeforeEveryWriteOfASignedCommandOnS3 (moto, the fault proxy
/// holding the Nth write while the process was killed); the real SIGKILL on a directory,
/// with a device reading the target, stays in SignedKillTests.
final class SignedKillLogicTests: XCTestCase {
    /// Signed 1.0.0 and 2.0.0 on stable, 3.0.0 on beta.
    func baseline(_ keys: TestKeys, work: Scratch) async throws -> InMemoryBucket {
        let storage = try InMemoryStorage()
        for (version, channel) in [("1.0.0", "stable"), ("2.0.0", "stable"), ("3.0.0", "beta")] {
            let file = try work.write("in/\(version).bin", patternBytes(3000, seed: UInt32(version.first!.asciiValue!)))
            try await TargetCommands(storage).publish(["m=" + file], name: nil, version: version, baseURL: "https://cdn.example.com/k",
                                                      signing: keys.signing) { $0.channel = channel }
        }
        return storage.bucket
    }

    /// The operations under test.
    func operations(_ keys: TestKeys, work: Scratch) throws -> [(name: String, run: (TargetCommands) async throws -> Void)] {
        let file = try work.write("in/4.bin", patternBytes(3000, seed: 44))
        let signing = keys.signing
        return [
            ("publish", { try await $0.publish(["m=" + file], name: nil, version: "4.0.0", baseURL: "https://cdn.example.com/k", signing: signing) }),
            ("rollback", { try await $0.rollback(to: "1.0.0", signing: signing) }),
            ("resign", { try await $0.resign(signing: signing) }),
            ("promote", { try await $0.promote(from: "beta", to: "stable", signing: signing) }),
        ]
    }

    /// True when minisign's verification accepts the live manifest with the live signature.
    func livePairVerifies(_ bucket: InMemoryBucket, _ keys: TestKeys) -> Bool {
        guard let manifest = bucket.data("manifest.json"), let signature = bucket.data("manifest.json.minisig") else { return false }
        return (try? MinisignSignature.verify(message: Array(manifest), signatureFile: String(decoding: signature, as: UTF8.self),
                                              publicKeys: [keys.secretKey.publicKey])) != nil
    }

    /// After a kill: a mismatched live pair is a warning of verify naming how it heals
    /// (devices accept the live manifest with the signature its release kept), a failure
    /// with --strict; the next command repairs it. Returns whether the pair was mismatched.
    @discardableResult
    func checkAfterKill(_ label: String, _ bucket: InMemoryBucket, _ keys: TestKeys) async throws -> Bool {
        let commands = TargetCommands(try InMemoryStorage(bucket: bucket, writer: "next"))
        let mismatched = !livePairVerifies(bucket, keys)
        if mismatched {
            let report = try await commands.verify(publicKeys: [keys.secretKey.publicKey])
            XCTAssertEqual(report.exitStatus, .success, "\(label): devices accept the live manifest with its kept signature, so verify warns: \(report.checks.filter { $0.status != .pass })")
            let warning = report.checks.first { $0.status == .warn && $0.check == "manifest.signature" }
            XCTAssertTrue(warning?.detail.contains("puts the live manifest's signature back") == true,
                          "\(label): verify names the mismatched pair and how it heals: \(report.checks.filter { $0.status != .pass })")
            let strict = try await commands.verify(publicKeys: [keys.secretKey.publicKey], strict: true)
            XCTAssertEqual(strict.exitStatus, .refused, "\(label): --strict fails the warning")
        }
        try await commands.prune(keep: 100)
        XCTAssertTrue(livePairVerifies(bucket, keys), "\(label): after the next command, minisign accepts the live pair")
        if mismatched {
            let after = try await commands.verify(publicKeys: [keys.secretKey.publicKey])
            XCTAssertEqual(after.exitStatus, .success, "\(label): verify after the next command: \(after.checks.filter { $0.status != .pass })")
        }
        return mismatched
    }

    func testAKillBeforeEveryWriteOfASignedCommand() async throws {
        let work = try Scratch()
        let keys = try TestKeys(in: work)
        let base = try await baseline(keys, work: work).snapshot
        var writes: [String: Int] = [:]
        var repaired: [String: Int] = [:]
        for operation in try operations(keys, work: work) {
            for n in 1...40 {
                let bucket = InMemoryBucket()
                bucket.restore(base)
                let storage = try InMemoryStorage(bucket: bucket)
                storage.faults.kill(afterWrites: n - 1)
                let label = "\(operation.name), killed before write \(n)"
                do {
                    try await operation.run(TargetCommands(storage))
                } catch {
                    XCTAssertTrue(storage.faults.hasKilled, "\(label): failed without being killed: \(error)")
                }
                guard storage.faults.hasKilled else {
                    writes[operation.name] = n - 1
                    try await checkAfterKill("\(operation.name), not killed", bucket, keys)
                    break
                }
                if try await checkAfterKill(label, bucket, keys) { repaired[operation.name, default: 0] += 1 }
            }
        }
        print("writes before completion (in memory): \(writes); kills repaired by the next command: \(repaired)")
        for name in ["publish", "rollback", "resign", "promote"] {
            XCTAssertGreaterThanOrEqual(writes[name] ?? 0, 4, "\(name) was killed at each of its writes: \(writes)")
            XCTAssertGreaterThanOrEqual(repaired[name] ?? 0, 1, "a kill between the signature and the manifest left a pair the next command repaired: \(repaired)")
        }
    }
}
