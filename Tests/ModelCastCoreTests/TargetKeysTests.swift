import Foundation
import XCTest
@testable import ModelCastCore

/// The key layout server and client share (`TargetKeys`): what publish writes is where a
/// device looks, for every channel and manifest key.
final class TargetKeysTests: XCTestCase {
    func testKeptSignatureKeysFollowTheHistoryLayout() {
        let expected: [(manifestKey: String, sequence: Int64, kept: String)] = [
            ("manifest.json", 7, "manifests/00000007.json.minisig"),
            ("models.json", 12, "manifests/models/00000012.json.minisig"),
            ("channels/beta/manifest.json", 1, "manifests/channels/beta/00000001.json.minisig"),
            ("channels/beta/models.json", 123_456_789, "manifests/channels/beta/models/123456789.json.minisig"),
        ]
        for item in expected {
            XCTAssertEqual(TargetKeys.keptSignatureKey(manifestKey: item.manifestKey, sequence: item.sequence), item.kept)
            // The server's names for the same keys.
            XCTAssertEqual(TargetLayout.signatureRecordKey(manifestKey: item.manifestKey, sequence: item.sequence), item.kept)
            XCTAssertEqual(SignedManifest.signatureKey(for: TargetLayout.historyKey(manifestKey: item.manifestKey, sequence: item.sequence)), item.kept)
        }
        for sequence: Int64 in [0, 1, 99_999_999, 100_000_000, Int64.max] {
            XCTAssertEqual(TargetKeys.historyKey(manifestKey: "manifest.json", sequence: sequence), "manifests/" + String(format: "%08lld", sequence) + ".json")
        }
    }

    func testAManifestURLIsSplitAtItsTargetsRoot() {
        let cases: [(location: String, root: String, key: String)] = [
            ("https://cdn.example.com/models/manifest.json", "https://cdn.example.com/models/", "manifest.json"),
            ("https://cdn.example.com/models/channels/beta/manifest.json", "https://cdn.example.com/models/", "channels/beta/manifest.json"),
            ("/models/channels/beta/models.json", "/models/", "channels/beta/models.json"),
            ("/channels/beta/manifest.json", "/", "channels/beta/manifest.json"),
            // Not a channel name: stable's manifest in a folder of its own.
            ("/models/channels/Beta_2/manifest.json", "/models/channels/Beta_2/", "manifest.json"),
            ("/manifest.json", "/", "manifest.json"),
        ]
        for item in cases {
            let split = TargetKeys.splitAtRoot(manifestLocation: item.location)
            XCTAssertEqual(split?.root, item.root, item.location)
            XCTAssertEqual(split?.manifestKey, item.key, item.location)
        }
        XCTAssertNil(TargetKeys.splitAtRoot(manifestLocation: "manifest.json"))
        XCTAssertEqual(targetRoot(ofManifestURL: "https://h/a/channels/beta/manifest.json"), "https://h/a/")
        XCTAssertEqual(targetKey(ofManifestURL: "https://h/a/channels/beta/manifest.json"), "channels/beta/manifest.json")
    }
}
