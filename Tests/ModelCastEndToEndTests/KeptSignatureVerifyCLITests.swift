import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// Issue 44, item 5: `verify` judges a live signature that does not sign the live manifest
/// as a device does. When the signature the live release kept beside its history record
/// proves the manifest, devices accept it: a warning (exit 0, `--strict` fails it). When
/// it does not, or is not there, the manifest is refused as before, naming why.
final class KeptSignatureVerifyCLITests: XCTestCase {
    func testVerifyWarnsWhenTheKeptSignatureProvesTheLiveManifestAndFailsOtherwise() throws {
        let work = try Scratch()
        let keys = try modelcast(["keygen", "--unencrypted", "--public-key", work.at("k.pub"), "--secret-key", work.at("k.key")])
        XCTAssertEqual(keys.status, 0, keys.stderr)
        let site = work.at("site")
        var before: [String: Data] = [:]
        for (round, versions) in [["1.0.0", "2.0.0"], ["1.1.0", "2.1.0"]].enumerated() {
            for (channel, version) in zip(["stable", "beta"], versions) {
                let file = try work.write("in/\(version).bin", patternBytes(1500, seed: UInt32(round * 2 + (channel == "beta" ? 1 : 0))))
                try PublishRun([file], version: version, baseURL: "https://cdn.example.com/k", to: site, ["--sign", work.at("k.key"), "--channel", channel]).succeeds()
                let key = Channels.manifestKey(channel: channel)
                if round == 0 { before[key] = try Data(contentsOf: URL(fileURLWithPath: site + "/" + key)) }
            }
        }
        // What a run stopped before its manifest write leaves, on both channels.
        for (key, bytes) in before { try bytes.write(to: URL(fileURLWithPath: site + "/" + key)) }

        for (channel, kept) in [("stable", "manifests/00000001.json.minisig"), ("beta", "manifests/channels/beta/00000001.json.minisig")] {
            let result = try modelcast(["verify", site, "--channel", channel, "--public-key", work.at("k.pub")])
            XCTAssertEqual(result.status, 0, "\(channel): \(result.stdout)\(result.stderr)")
            XCTAssertTrue(result.stdout.contains("WARN  manifest.signature"), result.stdout)
            XCTAssertTrue(result.stdout.contains("Devices that require a signature accept the manifest with the signature its release kept beside its history record, \(kept)"), result.stdout)
            XCTAssertTrue(result.stdout.contains("/site/\(kept)  good signature by key"), result.stdout)
            let strict = try modelcast(["verify", site, "--channel", channel, "--public-key", work.at("k.pub"), "--strict"])
            XCTAssertEqual(strict.status, 1, strict.stdout)
        }

        // A kept signature that does not prove the manifest, or none: refused as before.
        let keptPath = site + "/manifests/00000001.json.minisig"
        try FileManager.default.copyItem(atPath: site + "/manifests/00000002.json.minisig", toPath: keptPath + ".next")
        try FileManager.default.removeItem(atPath: keptPath)
        try FileManager.default.moveItem(atPath: keptPath + ".next", toPath: keptPath)
        let other = try modelcast(["verify", site, "--channel", "stable", "--public-key", work.at("k.pub")])
        XCTAssertEqual(other.status, 1, other.stdout)
        XCTAssertTrue(other.stdout.contains("The signature kept for sequence 1, manifests/00000001.json.minisig, does not prove it either: signature manifests/00000001.json.minisig"), other.stdout)
        XCTAssertFalse(other.stdout.contains("WARN  manifest.signature"), other.stdout)
        try FileManager.default.removeItem(atPath: keptPath)
        let missing = try modelcast(["verify", site, "--channel", "stable", "--public-key", work.at("k.pub")])
        XCTAssertEqual(missing.status, 1, missing.stdout)
        XCTAssertTrue(missing.stdout.contains("The signature kept for sequence 1, manifests/00000001.json.minisig, is not there either"), missing.stdout)
    }
}
