import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import XCTest
@testable import ModelCastCore

/// The verifier's body consumer runs the hasher on its own queue: bytes arrive in order,
/// no more than the high water (plus the buffer being handed over) waits at a time, and a
/// consumer failure stops consumption and reaches the reader.
final class BodyConsumerTests: XCTestCase {
    struct Stop: Error {}
    let eventLoop = MultiThreadedEventLoopGroup.singleton.next()

    func testBuffersAreConsumedInOrderWithBoundedQueue() async throws {
        let seen = NIOLockedValueBox([UInt8]())
        let consumer = BodyConsumer(highWater: 64 << 10) { chunk in
            usleep(200)  // a slow hasher, so the reader has to wait
            seen.withLockedValue { $0.append(contentsOf: chunk) }
        }
        var sent: [UInt8] = []
        for index in 0..<200 {
            let bytes = (0..<(4096 + index)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }
            sent += bytes
            try await consumer.submit(ByteBuffer(bytes: bytes), on: eventLoop).get()
            // Once the future completes, what is still queued is at most the high water.
            XCTAssertLessThanOrEqual(sent.count - seen.withLockedValue { $0.count }, (64 << 10) + 4096 + index)
        }
        try await consumer.finish()
        XCTAssertEqual(seen.withLockedValue { $0 }, sent)
    }

    func testAConsumerFailureStopsConsumptionAndReachesTheReader() async throws {
        let calls = NIOLockedValueBox(0)
        let consumer = BodyConsumer(highWater: 1 << 20) { _ in
            let call = calls.withLockedValue { value -> Int in value += 1; return value }
            if call == 3 { throw Stop() }
        }
        var thrown: Error?
        do {
            for _ in 0..<50 { try await consumer.submit(ByteBuffer(bytes: [1, 2, 3]), on: eventLoop).get() }
            try await consumer.finish()
        } catch {
            thrown = error
        }
        await consumer.drain()
        XCTAssertTrue(thrown is Stop, "\(String(describing: thrown))")
        XCTAssertEqual(calls.withLockedValue { $0 }, 3, "nothing is consumed after the failure")
    }
}
