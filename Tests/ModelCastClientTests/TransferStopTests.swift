import Foundation
import XCTest
@testable import ModelCastClient
import ModelCastCore
import ModelCastTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request that has ended stops its transfer for good, not only for the moments after it:
/// a server that keeps sending gets its connection closed and nothing more is read, however
/// long the process goes on (an app, unlike a device program, does not exit once the call
/// has returned). Measured with `endless_server.py`, which counts what it sent: nothing more
/// between 0.5 s and 3.5 s after the call returned, and the connection closed.
final class TransferStopTests: XCTestCase {
    /// A body that ran past its size fails the update; its flood is over.
    func testAFloodStaysStoppedOnceTheUpdateHasFailed() async throws {
        let site = try TransferBoundsTests.Site()
        for body in ["close", "chunked"] {
            try site.server.rules([["target": "artifact", "body": body]])
            let updater = try ModelUpdater(site.configuration("device-\(body)"))
            let call = await bounded(seconds: 20, server: site.server) { try await updater.update() }
            guard case .failure(let error)? = call.result else { return XCTFail("\(body): \(String(describing: call.result))") }
            XCTAssertTrue(String(describing: error).contains("m.bin"), "\(body): \(error)")
            try await assertStopped("artifact", server: site.server, label: body)
        }
    }

    /// Cancelling the task of a request whose body is still arriving ends the call at once
    /// and the transfer with it: the handler is not called again.
    func testCancellingARequestStopsItsTransfer() async throws {
        let site = try TransferBoundsTests.Site()
        try site.server.rules([["target": "artifact", "body": "chunked"]])
        let http = HTTPStream(timeout: 30, bounds: TransferBounds(minimumRate: 0, window: 30, metadataDeadline: 60))
        defer { http.invalidate() }
        let received = ByteCount()
        let request = URLRequest(url: URL(string: site.site.base + "/models/m/1.0.0/m.bin")!)
        let task = Task {
            try await http.get(request, metadata: false, onResponse: { _ in }, onData: { received.add($0.count) })
        }
        let deadline = Date().addingTimeInterval(10)
        while received.value < 1 << 20, Date() < deadline { try await Task.sleep(nanoseconds: 10_000_000) }
        XCTAssertGreaterThanOrEqual(received.value, 1 << 20, "the flood did not arrive")
        task.cancel()
        let result = await task.result
        let atReturn = received.value
        guard case .failure(let error) = result else { return XCTFail("the endless body completed") }
        XCTAssertTrue(error is CancellationError, "\(error)")
        try await assertStopped("artifact", server: site.server, label: "cancelled")
        XCTAssertEqual(received.value, atReturn, "the handler was called after the call returned")
    }

    /// A redirect's own body is nobody's: one that never ends is left after at most 64 KiB
    /// (libcurl, following a redirect itself, would read it for ever), and the redirect is
    /// followed.
    func testARedirectWhoseBodyNeverEndsIsLeftAndFollowed() async throws {
        let site = try TransferBoundsTests.Site()
        try site.server.rules([["target": "artifact", "body": "redirect", "times": 1]])
        let updater = try ModelUpdater(site.configuration("device"))
        let call = await bounded(seconds: 20, server: site.server) { try await updater.update() }
        guard case .success(let outcome)? = call.result else { return XCTFail("\(String(describing: call.result)) after \(call.seconds) s") }
        XCTAssertEqual(outcome, .updated(sequence: 1, models: ["m": "1.0.0"]))
        try await Task.sleep(nanoseconds: 300_000_000)  // the server writes its counts every 0.1 s
        let redirect = try XCTUnwrap(site.server.last("artifact"))
        if let read = site.server.bytesRead(clientPort: redirect.port, sent: redirect.connection.sent) {
            XCTAssertLessThanOrEqual(read, TransferBoundsTests.slack, "the redirect's body was read on")
        } else {
            XCTAssertFalse(redirect.connection.open)
            XCTAssertLessThan(redirect.connection.seconds, 1, "the redirect's connection closed late")
        }
        XCTAssertEqual(site.server.requests.filter { $0.contains("/m.bin ") }.count, 2, site.server.requests.joined(separator: "\n"))
        try site.server.rules([])
    }

    /// The last answer shaped for `target`: closed, and nothing more sent from 0.5 s to
    /// 3.5 s after the call returned. Then the flood's rule goes (which ends it anyway).
    private func assertStopped(_ target: String, server: EndlessServer, label: String, file: StaticString = #filePath, line: UInt = #line) async throws {
        try await Task.sleep(nanoseconds: 500_000_000)
        let early = try XCTUnwrap(server.last(target), "\(label): no answer was shaped", file: file, line: line)
        try await Task.sleep(nanoseconds: 3_000_000_000)
        let late = try XCTUnwrap(server.connections()[early.port], file: file, line: line)
        XCTAssertFalse(late.open, "\(label): the connection is still open after 3.5 s (\(late.sent) B sent)", file: file, line: line)
        XCTAssertEqual(late.sent, early.connection.sent, "\(label): the server could still send after the call returned", file: file, line: line)
        try server.rules([])
    }
}

/// Bytes a handler took, read from the test's task.
// @unchecked: `count` is touched only under `lock`.
private final class ByteCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }

    func add(_ bytes: Int) {
        lock.lock()
        count += bytes
        lock.unlock()
    }
}
