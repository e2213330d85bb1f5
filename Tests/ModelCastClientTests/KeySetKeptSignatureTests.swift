import Foundation
import XCTest
import ModelCastClient
import ModelCastTestSupport

/// Under a key set, a manifest is proven by its manifest threshold of signatures wherever
/// modelcast puts them: the inline member (over the manifest without it), `.minisig` and
/// `.sigs` (over the bytes as served), and, when a publish stopped between its signature
/// writes and its manifest write left the next release's signatures beside the live
/// manifest, the ones its release kept beside its history record
/// (`manifests/N.json.minisig` and `manifests/N.json.sigs`), as a device with a pinned key
/// is (`KeptSignatureClientTests`). Whatever proves it, the rules after the signatures are
/// the same.
final class KeySetKeptSignatureTests: XCTestCase {
    typealias Site = KeySetClientTests.Site

    /// `keys create`: roots R1, R2 (threshold 2); manifest keys K1, K2 (threshold 2).
    func createTwoOfTwo(_ site: Site) throws {
        try site.keys("create", ["--root", site.r1.pub, "--root", site.r2.pub, "--root-threshold", "2",
                                 "--manifest-key", site.k1.pub, "--manifest-key", site.k2.pub, "--manifest-threshold", "2",
                                 "--sign-root", site.r1.secret, "--sign-root", site.r2.secret])
    }

    func testAManifestBesideTheNextReleasesSignaturesIsProvenByTheSignaturesItsReleaseKept() async throws {
        let site = try Site()
        try createTwoOfTwo(site)
        try site.publish("1.0.0", [site.k1, site.k2])
        let v1 = try Data(contentsOf: URL(fileURLWithPath: site.root + "/manifest.json"))
        try site.start()
        let ahead = try site.device("ahead")
        try site.publish("1.0.1", [site.k1, site.k2])
        let aheadOutcome = try await ahead.update()
        XCTAssertEqual(aheadOutcome, .updated(sequence: 2, models: ["m": "1.0.1"]))

        // The window a stopped publish leaves: release 1's manifest, release 2's .minisig and .sigs.
        try v1.write(to: URL(fileURLWithPath: site.root + "/manifest.json"))
        let fresh = try site.device("fresh")
        let outcome = try await fresh.update()
        XCTAssertEqual(outcome, .updated(sequence: 1, models: ["m": "1.0.0"]))
        XCTAssertTrue(site.requests.contains("manifests/00000001.json.minisig"), "\(site.requests)")
        XCTAssertTrue(site.requests.contains("manifests/00000001.json.sigs"), "\(site.requests)")

        // The sequence still never goes back.
        do {
            _ = try await ahead.update()
            XCTFail("the device went back from sequence 2 to 1")
        } catch let error as ClientError {
            XCTAssertEqual(error, .replayed(url: site.base + "/manifest.json", sequence: 1, highestAccepted: 2))
        }
        XCTAssertEqual(ahead.installed("m")?.version, "1.0.1")

        // Kept signatures below the threshold (the kept list holds K1's alone) prove nothing:
        // refused, naming the live failure and the kept one's.
        let keptList = site.root + "/manifests/00000001.json.sigs"
        try FileManager.default.removeItem(atPath: keptList)
        try FileManager.default.copyItem(atPath: site.root + "/manifests/00000001.json.minisig", toPath: keptList)
        let short = try site.device("short")
        do {
            _ = try await short.update()
            XCTFail("one kept signature met a threshold of 2")
        } catch let error as ClientError {
            guard case .manifestThresholdNotMet(_, let version, let reason) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(version, 1)
            XCTAssertTrue(reason.contains("the signatures kept for sequence 1"), reason)
            XCTAssertEqual(error.kind, .refused)
        }
        XCTAssertEqual(site.models("short"), [], "nothing installed")
    }

    /// A manifest with its signature inside (`publish --inline-signature`) and a second
    /// signer: the inline member is K1's over the manifest without it; `.minisig` and
    /// `.sigs` are over the bytes as served (what `minisign -V` checks). Both count.
    func testAnInlineSignatureCountsBesideTheSignatureList() async throws {
        let site = try Site()
        try createTwoOfTwo(site)
        try site.publish("1.0.0", [site.k1, site.k2], ["--inline-signature"])
        try site.start()
        let device = try site.device("a")
        let outcome = try await device.update()
        XCTAssertEqual(outcome, .updated(sequence: 1, models: ["m": "1.0.0"]))

        // K2's signature gone from the list: K1's inline one and K1's in the list are one key.
        try FileManager.default.removeItem(atPath: site.root + "/manifest.json.sigs")
        try FileManager.default.copyItem(atPath: site.root + "/manifest.json.minisig", toPath: site.root + "/manifest.json.sigs")
        let short = try site.device("short")
        do {
            _ = try await short.update()
            XCTFail("K1's inline signature and K1's detached one counted as two keys")
        } catch let error as ClientError {
            guard case .manifestThresholdNotMet = error else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(site.models("short"), [], "nothing installed")
    }
}
