import Foundation
import XCTest
import ModelCastClient
import ModelCastTestSupport

/// A private S3 bucket whose readers may not list it answers 403, not 404, for a key that
/// is not there. A device on such a bucket must read the 403 for `keys/(N+1).json` as the
/// end of the chain, and the 403 for `manifest.json.sigs` (a single signer writes none) as
/// no list, as `modelcast verify` does (`absent: [403, 404]`); else every check of every
/// device fails. Served by `misbehaving_server.py`'s "private" mode.
final class KeySetPrivateBucketTests: XCTestCase {
    typealias Site = KeySetClientTests.Site

    func testAForbiddenNextKeySetEndsTheChainAsNotFoundDoes() async throws {
        let site = try Site(folder: "private")
        try site.publish("1.0.0", [site.k1])
        try site.createKeySet()
        try site.start()
        let device = try site.device("a")
        let first = try await device.update()
        XCTAssertEqual(first, .updated(sequence: 1, models: ["m": "1.0.0"]))
        XCTAssertTrue(site.requests.contains("keys/2.json"), "\(site.requests)")

        // Key set 2 (K2 in, K1 out) is followed; keys/3.json answers 403: the end.
        try site.rotateToK2()
        try site.publish("1.0.1", [site.k2])
        let second = try await device.update()
        XCTAssertEqual(second, .updated(sequence: 2, models: ["m": "1.0.1"]))
        XCTAssertEqual(try site.keptKeySetVersion("a"), 2)
        XCTAssertTrue(site.requests.contains("keys/3.json"), "\(site.requests)")

        // A key set whose root signatures are not there (403) is refused as a missing one is,
        // naming the file: not an HTTP failure to retry.
        try FileManager.default.removeItem(atPath: site.root + "/keys/2.json.sigs")
        let fresh = try site.device("b")
        do {
            _ = try await fresh.update()
            XCTFail("a key set without its signature list was accepted")
        } catch let error as ClientError {
            guard case .keySetRefused(let path, let version, let reason) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(path, "keys/2.json")
            XCTAssertEqual(version, 2)
            XCTAssertTrue(reason.contains("keys/2.json.sigs is missing (HTTP 403)"), reason)
            XCTAssertEqual(error.kind, .refused)
        }
        XCTAssertEqual(site.models("b"), [], "nothing installed")
    }
}
