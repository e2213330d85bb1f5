import Foundation
import XCTest
import ModelCastClient
import ModelCastCore
import ModelCastFormat
import ModelCastTestSupport

/// Issue 51's targets on the shape of the chain: a chain of 10,000 versions is walked
/// `KeySetChain.maxVersionsPerCheck` (32) versions per check, the verified prefix kept and
/// continued by the next check, with a bounded number of requests; a newest key set that
/// expired is refused (an intermediate one may have); a version gap is refused, and a
/// missing version ends the chain. Nothing is installed by any refused check.
final class KeySetChainBoundsTests: XCTestCase {
    typealias Site = KeySetClientTests.Site

    /// A genuine chain of 10,000 key sets, made in this process with the CLI's signer
    /// (`SignedKeySet`): one root key throughout, manifest key K1 until version 9,999 and K2
    /// from 10,000 (K1 revoked, floor 1). The live manifest is signed by K2 alone, so only a
    /// device that reached version 10,000 takes it.
    func testATenThousandVersionChainIsWalked32VersionsPerCheck() async throws {
        let site = try Site()
        try site.publish("1.0.0", [site.k2])
        let root = try MinisignSecretKey.generate()
        let roots = try KeySetRole(keys: [root.publicKey], threshold: 1, field: "root")
        let early = try KeySetRole(keys: [try MinisignPublicKey.load(path: site.k1.pub)], threshold: 1, field: "manifest")
        let late = try KeySetRole(keys: [try MinisignPublicKey.load(path: site.k2.pub)], threshold: 1, field: "manifest")
        let expiresAt = Date().addingTimeInterval(365 * 86_400)
        let newest: Int64 = 10_000
        let started = Date()
        // 30,000 small files: on a tmpfs when there is one (a disk takes minutes to write them).
        if FileManager.default.fileExists(atPath: "/dev/shm") {
            let memory = "/dev/shm/modelcast-keyset-chain-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: memory, withIntermediateDirectories: true)
            addTeardownBlock { try? FileManager.default.removeItem(atPath: memory) }
            try FileManager.default.createSymbolicLink(atPath: site.root + "/keys", withDestinationPath: memory)
        } else {
            try FileManager.default.createDirectory(atPath: site.root + "/keys", withIntermediateDirectories: true)
        }
        for version in 1...newest {
            let keySet = try KeySet(version: version, expiresAt: expiresAt, root: roots, manifest: version < newest ? early : late,
                                    sequenceFloors: version < newest ? [:] : [.stable: 1])
            for object in try SignedKeySet(keySet: keySet, roots: [root]).objects {
                try object.data.write(to: URL(fileURLWithPath: site.root + "/" + object.key))
            }
        }
        print("10,000 key sets made and written in \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
        try site.start()

        let device = try site.device("d")
        for (check, reached) in [(1, Int64(33)), (2, Int64(65))] {
            let before = site.requests.count
            let clock = Date()
            do {
                _ = try await device.update()
                XCTFail("check \(check): the manifest of key set \(newest)'s key was accepted")
            } catch let error as ClientError {
                guard case .manifestThresholdNotMet(_, let version, _) = error else { return XCTFail("check \(check): \(error)") }
                XCTAssertEqual(version, reached, "check \(check): the manifest is judged by the newest key set reached")
            }
            let seconds = Date().timeIntervalSince(clock)
            XCTAssertLessThan(seconds, 20, "check \(check)")
            XCTAssertTrue(device.installedModels().isEmpty, "check \(check): nothing installed")
            XCTAssertEqual(try site.keptKeySetVersion("d"), Int(reached), "check \(check): the verified prefix is kept")
            let asked = Array(site.requests[before...])
            let documents = asked.filter { $0.hasPrefix("keys/") && $0.hasSuffix(".json") }
            let first = reached - Int64(KeySetChain.maxVersionsPerCheck) + 1
            XCTAssertEqual(documents, (first...reached).map { "keys/\($0).json" }, "check \(check): exactly the next 32 versions, in order")
            XCTAssertEqual(asked.filter { $0.hasSuffix(".json.sigs") && $0.hasPrefix("keys/") }.count, KeySetChain.maxVersionsPerCheck, "check \(check)")
            // 32 documents and their lists, the manifest, its .minisig and .sigs: nothing else.
            XCTAssertEqual(asked.count, 2 * KeySetChain.maxVersionsPerCheck + 3, "check \(check): \(asked.suffix(5))")
            print("check \(check): \(asked.count) requests, key set \(reached) reached, \(String(format: "%.2f", seconds)) s")
        }

        // The chain is sound to its end: an app that ships version 9,990 reaches 10,000 in one
        // check and installs the release K2 signed.
        let newerApp = try site.device("late", shipping: try Data(contentsOf: URL(fileURLWithPath: site.root + "/keys/9990.json")))
        let outcome = try await newerApp.update()
        XCTAssertEqual(outcome, .updated(sequence: 1, models: ["m": "1.0.0"]))
        XCTAssertEqual(try site.keptKeySetVersion("late"), 10_000)
    }

    /// Key set 2 expires two days out; a device whose clock reads three days out refuses
    /// it (a frozen chain: the root keys must publish a fresh one), installs nothing and
    /// keeps what it has. Key set 3 (a year) supersedes it: key set 2 is then an expired
    /// intermediate link, which is fine.
    func testAnExpiredNewestKeySetIsRefusedAndAnExpiredIntermediateOneIsNot() async throws {
        let site = try Site()
        try site.publish("1.0.0", [site.k1])
        try site.createKeySet()
        try site.start()
        let later: @Sendable () -> Date = { Date().addingTimeInterval(3 * 86_400) }
        let device = try site.device("a", now: later)
        let first = try await device.update()
        XCTAssertEqual(first, .updated(sequence: 1, models: ["m": "1.0.0"]))

        try site.keys("rotate", ["--manifest-key", site.k2.pub, "--revoke", site.k1.id, "--expires-in", "2d",
                                 "--sign-root", site.r1.secret, "--sign-root", site.r2.secret])
        try site.publish("1.0.1", [site.k2])
        for (name, installed) in [("a", "1.0.0"), ("fresh", nil)] as [(String, String?)] {
            let updater = try site.device(name, now: later)
            do {
                _ = try await updater.update()
                XCTFail("\(name): a manifest under an expired key set was accepted")
            } catch let error as ClientError {
                guard case .keySetRefused(let path, let version, let reason) = error else { return XCTFail("\(name): \(error)") }
                XCTAssertEqual(path, "keys/2.json")
                XCTAssertEqual(version, 2)
                XCTAssertTrue(reason.contains("expired at"), reason)
                XCTAssertEqual(error.kind, .refused)
            }
            XCTAssertEqual(updater.installed("m")?.version, installed, "\(name): nothing new installed")
        }

        try site.keys("rotate", ["--sign-root", site.r1.secret, "--sign-root", site.r2.secret])
        for name in ["a", "fresh"] {
            let updater = try site.device(name, now: later)
            let outcome = try await updater.update()
            XCTAssertEqual(outcome, .updated(sequence: 2, models: ["m": "1.0.1"]), name)
            XCTAssertEqual(try site.keptKeySetVersion(name), 3, name)
        }
    }

    /// Key sets 1 (K1), 2 (K2 in, K1 out), 3 (K3 in, K2 out); the live release is K3's.
    /// `keys/2.json` holding key set 3 (a gap) is refused; `keys/2.json` missing ends the
    /// chain at 1, whose keys did not sign the manifest. Nothing installed either way; the
    /// genuine chain then installs.
    func testAVersionGapIsRefusedAndAMissingVersionEndsTheChain() async throws {
        let site = try Site()
        let k3 = site.work.at("k3")
        let generated = try modelcast(["keygen", "--unencrypted", "--public-key", k3 + ".pub", "--secret-key", k3 + ".key"])
        XCTAssertEqual(generated.status, 0, generated.stderr)
        try site.publish("1.0.0", [site.k1])
        try site.createKeySet()
        try site.rotateToK2()
        let k2ID = try MinisignPublicKey.load(path: site.k2.pub).keyID.hex
        try site.keys("rotate", ["--manifest-key", k3 + ".pub", "--revoke", k2ID, "--sign-root", site.r1.secret, "--sign-root", site.r2.secret])
        let publish = try PublishRun([try site.work.write("in/1.0.1/m.bin", patternBytes(5000, seed: 101))], version: "1.0.1",
                                     baseURL: site.base, to: site.root, ["--sign", k3 + ".key"]).run()
        XCTAssertEqual(publish.status, 0, publish.stderr)
        try site.start()
        let keys = site.root + "/keys/"
        let genuine = try ["2.json", "2.json.minisig", "2.json.sigs"].map { ($0, try Data(contentsOf: URL(fileURLWithPath: keys + $0))) }

        for suffix in ["", ".minisig", ".sigs"] {
            try FileManager.default.removeItem(atPath: keys + "2.json" + suffix)
            try FileManager.default.copyItem(atPath: keys + "3.json" + suffix, toPath: keys + "2.json" + suffix)
        }
        let gap = try site.device("gap")
        do {
            _ = try await gap.update()
            XCTFail("key set 3 served as keys/2.json was accepted")
        } catch let error as ClientError {
            guard case .keySetRefused(let path, let version, let reason) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(path, "keys/2.json")
            XCTAssertEqual(version, 2)
            XCTAssertTrue(reason.contains("says version 3; the version after 1 must be 2"), reason)
        }
        XCTAssertEqual(site.models("gap"), [], "nothing installed")
        XCTAssertFalse(site.requests.contains("keys/3.json"), "the walk stopped at the gap")

        for suffix in ["", ".minisig", ".sigs"] { try FileManager.default.removeItem(atPath: keys + "2.json" + suffix) }
        let before = site.requests.count
        let missing = try site.device("missing")
        do {
            _ = try await missing.update()
            XCTFail("a manifest signed by key set 3's key was accepted by a chain that ends at 1")
        } catch let error as ClientError {
            guard case .manifestThresholdNotMet(_, let version, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(version, 1, "the chain ends at the missing version")
        }
        XCTAssertEqual(site.models("missing"), [], "nothing installed")
        XCTAssertFalse(site.requests[before...].contains("keys/3.json"), "nothing past the missing version is asked for")

        for (name, data) in genuine { try data.write(to: URL(fileURLWithPath: keys + name)) }
        let outcome = try await missing.update()
        XCTAssertEqual(outcome, .updated(sequence: 2, models: ["m": "1.0.1"]))
        XCTAssertEqual(try site.keptKeySetVersion("missing"), 3)
    }
}
