import Foundation
import XCTest
import ModelCastClient
import ModelCastCore
import ModelCastTestSupport

/// Issue 44, item 5: a publish stopped between its signature write and its manifest write
/// leaves the next release's signature beside the live manifest. A device proves the live
/// manifest with the signature its release kept beside its history record
/// (`manifests/<sequence>.json.minisig`), by the same rules as the live one, and refuses
/// any kept signature that does not prove exactly this manifest.
final class KeptSignatureClientTests: XCTestCase {
    typealias Site = ClientTests.Site

    /// Leaves `manifestPath` as a stopped publish does: `bytes` (the release before) beside
    /// the signature already written for the next one.
    func putBack(_ bytes: Data, at manifestPath: String) throws {
        try bytes.write(to: URL(fileURLWithPath: manifestPath))
    }

    func testAManifestBesideTheNextReleasesSignatureIsProvenByTheSignatureItsReleaseKept() async throws {
        let site = try Site()
        try site.publish([try site.work.write("v1/m.bin", patternBytes(2000, seed: 1))], version: "1.0.0", ["--expires-in", "30d"])
        let v1 = try Data(contentsOf: URL(fileURLWithPath: site.root + "/manifest.json"))
        try site.publish([try site.work.write("b1/m.bin", patternBytes(2200, seed: 3))], version: "3.0.0", ["--channel", "beta"])
        let beta1 = try Data(contentsOf: URL(fileURLWithPath: site.root + "/channels/beta/manifest.json"))
        try site.start()
        // This device takes sequence 2 before the window: it must never go back to 1.
        let ahead = try ModelUpdater(site.configuration(directory: "ahead"))
        try site.publish([try site.work.write("v2/m.bin", patternBytes(2100, seed: 2))], version: "1.1.0", ["--expires-in", "30d"])
        try site.publish([try site.work.write("b2/m.bin", patternBytes(2300, seed: 4))], version: "3.1.0", ["--channel", "beta"])
        let aheadOutcome = try await ahead.update()
        XCTAssertEqual(aheadOutcome, .updated(sequence: 2, models: ["m": "1.1.0"]))

        try putBack(v1, at: site.root + "/manifest.json")
        try putBack(beta1, at: site.root + "/channels/beta/manifest.json")
        let publicKey = String(site.publicKey.split(separator: "\n")[1])
        // Stock minisign, with the live signature: refused; with the kept one: accepted.
        let live = try runProcess("/usr/bin/env", ["minisign", "-Vm", site.root + "/manifest.json", "-P", publicKey])
        XCTAssertNotEqual(live.status, 0, "the window is real: stock minisign refuses the live pair")
        let kept = try runProcess("/usr/bin/env", ["minisign", "-Vm", site.root + "/manifest.json", "-x", site.root + "/manifests/00000001.json.minisig", "-P", publicKey])
        XCTAssertEqual(kept.status, 0, kept.stdout + kept.stderr)

        let device = try ModelUpdater(site.configuration(directory: "fresh"))
        let outcome = try await device.update()
        XCTAssertEqual(outcome, .updated(sequence: 1, models: ["m": "1.0.0"]))
        XCTAssertTrue(site.requests.contains { $0.hasPrefix("GET /models/manifests/00000001.json.minisig") }, "\(site.requests)")
        let betaDevice = try ModelUpdater(site.configuration(directory: "beta", channel: "beta"))
        let betaOutcome = try await betaDevice.update()
        XCTAssertEqual(betaOutcome, .updated(sequence: 1, models: ["m": "3.0.0"]))
        XCTAssertTrue(site.requests.contains { $0.hasPrefix("GET /models/manifests/channels/beta/00000001.json.minisig") }, "\(site.requests)")

        // The rules after the signature are the same: a sequence never goes back, an
        // expired manifest is refused.
        do {
            _ = try await ahead.update()
            XCTFail("the device went back from sequence 2 to 1")
        } catch let error as ClientError {
            XCTAssertEqual(error, .replayed(url: site.base + "/manifest.json", sequence: 1, highestAccepted: 2))
        }
        XCTAssertEqual(ahead.installed("m")?.version, "1.1.0")
        let late = try ModelUpdater(site.configuration(directory: "late", now: { Date().addingTimeInterval(40 * 86_400) }))
        do {
            _ = try await late.update()
            XCTFail("an expired manifest was accepted with its kept signature")
        } catch let error as ClientError {
            guard case .expired = error else { return XCTFail("\(error)") }
        }
    }

    /// Every kept signature that does not prove exactly this manifest is refused, the
    /// device keeps what it has, and the error names the live signature's failure and the
    /// kept one's.
    func testAKeptSignatureThatDoesNotProveTheManifestIsRefused() async throws {
        let site = try Site()
        try site.publish([try site.work.write("v1/m.bin", patternBytes(2000, seed: 1))], version: "1.0.0", ["--expires-in", "30d"])
        let v1 = try Data(contentsOf: URL(fileURLWithPath: site.root + "/manifest.json"))
        let v1Release = try Release.decode(v1, source: "v1")
        try site.publish([try site.work.write("v2/m.bin", patternBytes(2100, seed: 2))], version: "1.1.0", ["--expires-in", "30d"])
        try putBack(v1, at: site.root + "/manifest.json")
        try site.start()
        let keptPath = site.root + "/manifests/00000001.json.minisig"
        let original = try Data(contentsOf: URL(fileURLWithPath: keptPath))
        let secretKey = try MinisignSecretKey.load(path: site.work.at("k.key"), passphrase: nil)
        let other = try MinisignSecretKey.generate()
        func signed(by key: MinisignSecretKey = secretKey, file: String = "manifest.json", sequence: Int64 = 1, expiresAt: String? = v1Release.expiresAt) throws -> Data {
            let comment = TrustedComment(timestamp: 1, file: file, sequence: sequence, version: "1.0.0", expiresAt: expiresAt).text
            return Data(try key.sign(message: [UInt8](v1), trustedComment: comment).utf8)
        }
        let cases: [(label: String, kept: Data?, names: String)] = [
            ("another sequence's comment", try signed(sequence: 2), "the manifest says sequence 1, its signature says 2"),
            ("another channel's file", try signed(file: "channels/beta/manifest.json"), "the signature is for 'channels/beta/manifest.json', not manifest.json"),
            ("another manifest's file", try signed(file: "models.json"), "the signature is for 'models.json', not manifest.json"),
            ("another expiry", try signed(expiresAt: "2099-01-01T00:00:00Z"), "its signature says 2099-01-01T00:00:00Z"),
            ("the next release's signature", try Data(contentsOf: URL(fileURLWithPath: site.root + "/manifests/00000002.json.minisig")), "does not verify"),
            ("a key the device does not trust", try signed(by: other), "which is not a trusted key"),
            ("no minisign signature", Data("not a signature\n".utf8), "malformed signature file"),
            ("larger than a signature may be", Data(repeating: 0x41, count: 20_000), "could not be read"),
            ("missing", nil, "is not there (HTTP 404)"),
        ]
        for (index, item) in cases.enumerated() {
            if let kept = item.kept { try kept.write(to: URL(fileURLWithPath: keptPath)) } else { try FileManager.default.removeItem(atPath: keptPath) }
            let device = try ModelUpdater(site.configuration(directory: "device-\(index)"))
            do {
                _ = try await device.update()
                XCTFail("\(item.label): accepted")
            } catch let error as ClientError {
                guard case .badSignature(let url, let reason) = error else { XCTFail("\(item.label): \(error)"); continue }
                XCTAssertEqual(url, site.base + "/manifest.json", item.label)
                XCTAssertTrue(reason.contains("does not verify"), "\(item.label): the live signature's failure is named: \(reason)")
                XCTAssertTrue(reason.contains("the signature kept for sequence 1, \(site.base)/manifests/00000001.json.minisig"), "\(item.label): \(reason)")
                XCTAssertTrue(reason.contains(item.names), "\(item.label): \(reason)")
            }
            XCTAssertNil(device.installed("m"), item.label)
        }
        // The same window with the kept signature as publish wrote it: accepted.
        try original.write(to: URL(fileURLWithPath: keptPath))
        let outcome = try await ModelUpdater(site.configuration(directory: "device-good")).update()
        XCTAssertEqual(outcome, .updated(sequence: 1, models: ["m": "1.0.0"]))

        // A live signature that names this very sequence is no other release's: it fails as
        // it is, and no kept signature is looked for (nor accepted).
        let livePath = site.root + "/manifest.json.minisig"
        let lookups = site.requests.filter { $0.contains("/manifests/00000001.json.minisig") }.count
        try signed(by: other).write(to: URL(fileURLWithPath: livePath))
        let device = try ModelUpdater(site.configuration(directory: "device-foreign"))
        do {
            _ = try await device.update()
            XCTFail("a live signature by an untrusted key was accepted")
        } catch let error as ClientError {
            guard case .badSignature(_, let reason) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("which is not a trusted key"), reason)
            XCTAssertFalse(reason.contains("kept"), reason)
        }
        XCTAssertEqual(site.requests.filter { $0.contains("/manifests/00000001.json.minisig") }.count, lookups, "\(site.requests)")
    }
}
