import Foundation
import XCTest
import ModelCastClient
import ModelCastFormat
import ModelCastTestSupport

/// Issue 51's bounds on what a key set chain costs a device: `keys/N.json` is read to 64 KiB
/// (`KeySet.maxBytes`) and `keys/N.json.sigs` to 16 KiB (`MinisignSignatureList.maxBytes`),
/// each within a metadata request's time bounds. A server that sends an endless body (a
/// 1 TiB Content-Length, no length and the connection kept open, endless chunks) or a huge
/// one (an honest Content-Length past the bound, or none) gets the connection closed within
/// the bound plus 64 KiB: the check fails at once with `tooLarge` naming the object, memory
/// stays flat, nothing is installed and the key set is not taken; once the server answers
/// honestly, the same device follows the chain. Measured with `endless_server.py`.
final class KeySetTransferBoundsTests: XCTestCase {
    typealias Site = KeySetClientTests.Site

    /// Key sets 1 (K1) and 2 (K2 in, K1 revoked), release 1.0.1 signed by K2, served by
    /// `endless_server.py` under /models/.
    func rotatedSite() throws -> (Site, EndlessServer) {
        let site = try Site(folder: "models")
        try site.publish("1.0.0", [site.k1])
        try site.createKeySet()
        try site.rotateToK2()
        try site.publish("1.0.1", [site.k2])
        return (site, try EndlessServer(root: site.root, port: site.port, work: site.work))
    }

    /// The bodies that must each be refused: endless three ways, and huge with and without a length.
    static var rules: [(label: String, rule: [String: Any])] {
        [("endless, a 1 TiB Content-Length", ["body": "lying"]),
         ("endless, no length", ["body": "close"]),
         ("endless, chunked", ["body": "chunked"]),
         ("huge, Content-Length 1 MiB", ["body": "huge", "size": 1 << 20]),
         ("huge, no length", ["body": "huge", "size": 1 << 20, "length": false])]
    }

    func testAnEndlessOrHugeKeySetDocumentIsRefusedWithinItsBound() async throws {
        let (site, server) = try rotatedSite()
        for (index, shape) in Self.rules.enumerated() {
            try await refusedWithinBound(target: "keyset", shape, path: "keys/2.json", object: "key set", limit: KeySet.maxBytes,
                                         site: site, server: server, device: "d\(index)")
        }
        try await followsOnceHonest(site, device: "d0")
    }

    func testAnEndlessOrHugeSignatureListIsRefusedWithinItsBound() async throws {
        let (site, server) = try rotatedSite()
        for (index, shape) in Self.rules.enumerated() {
            try await refusedWithinBound(target: "sigs", shape, path: "keys/2.json.sigs", object: "signature list", limit: MinisignSignatureList.maxBytes,
                                         site: site, server: server, device: "s\(index)")
        }
        try await followsOnceHonest(site, device: "s0")
    }

    /// One update of a fresh device while `target` is answered as `shape` says: refused with
    /// `tooLarge` for `path`, within 10 s, memory within 256 MiB, at most `limit` + 64 KiB of
    /// the body read (or the connection closed within 1 s), nothing sent after, nothing
    /// installed, no key set kept.
    func refusedWithinBound(target: String, _ shape: (label: String, rule: [String: Any]), path: String, object: String, limit: Int,
                            site: Site, server: EndlessServer, device name: String,
                            file: StaticString = #filePath, line: UInt = #line) async throws {
        let label = "\(path), \(shape.label)"
        try server.rules([shape.rule.merging(["target": target]) { old, _ in old }])
        let device = try site.device(name)
        let call = await bounded(seconds: 20, server: server) { try await device.update() }
        try await Task.sleep(nanoseconds: 500_000_000)
        let answer = try XCTUnwrap(server.last(target), "\(label): the server shaped no answer", file: file, line: line)
        let read = server.bytesRead(clientPort: answer.port, sent: answer.connection.sent)
        try await Task.sleep(nanoseconds: 500_000_000)
        let later = server.connections()[answer.port]
        try server.rules([])
        try await Task.sleep(nanoseconds: 200_000_000)
        let measured = "returned in \(String(format: "%.3f", call.seconds)) s, memory +\(call.memoryGrowth >> 20) MiB, server sent \(answer.connection.sent) B, client read \(read.map(String.init) ?? "-") B"
        print("\(label): \(measured)")
        guard let result = call.result else { return XCTFail("\(label): the update did not return within 20 s (\(measured))", file: file, line: line) }
        switch result {
        case .success(let outcome):
            XCTFail("\(label): the update succeeded (\(outcome))", file: file, line: line)
        case .failure(let error):
            XCTAssertEqual(error as? ClientError, .tooLarge(url: site.base + "/" + path, object: object, limit: Int64(limit)), "\(label)", file: file, line: line)
        }
        XCTAssertLessThan(call.seconds, 10, "\(label): \(measured)", file: file, line: line)
        XCTAssertLessThan(call.memoryGrowth, 256 << 20, "\(label): \(measured)", file: file, line: line)
        if let read {
            XCTAssertLessThanOrEqual(read, Int64(limit) + TransferBoundsTests.slack, "\(label): \(measured)", file: file, line: line)
        } else {
            XCTAssertFalse(answer.connection.open, "\(label): \(measured)", file: file, line: line)
            XCTAssertLessThan(answer.connection.seconds, 1, "\(label): closed late (\(measured))", file: file, line: line)
        }
        XCTAssertLessThanOrEqual((later?.sent ?? answer.connection.sent) - answer.connection.sent, 0, "\(label): the server could still send", file: file, line: line)
        XCTAssertEqual(site.models(name), [], "\(label): nothing installed", file: file, line: line)
        XCTAssertNil(try? site.keptKeySetVersion(name), "\(label): no key set kept", file: file, line: line)
    }

    /// The device a shaped answer refused follows the chain once the server is honest.
    func followsOnceHonest(_ site: Site, device name: String) async throws {
        let device = try site.device(name)
        let outcome = try await device.update()
        XCTAssertEqual(outcome, .updated(sequence: 2, models: ["m": "1.0.1"]))
        XCTAssertEqual(try site.keptKeySetVersion(name), 2)
    }
}
