import NIOCore
import NIOPosix
import XCTest
@testable import ModelCastCore

/// Bodies are spread over the client's event loops, and hashed on the loop that read them
/// only while every loop reads one.
final class BodyLanesTests: XCTestCase {
    func testBodiesGoToTheLeastBusyLoopAndHashThereOnlyWhileEveryLoopReadsOne() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 3)
        defer { try? group.syncShutdownGracefully() }
        let lanes = BodyLanes(group: group)
        XCTAssertFalse(lanes.hashOnLoop)
        let first = lanes.open(), second = lanes.open()
        XCTAssertNotEqual(first.index, second.index)
        XCTAssertFalse(lanes.hashOnLoop, "one loop still reads nothing")
        let third = lanes.open()
        XCTAssertEqual(Set([first.index, second.index, third.index]).count, 3)
        XCTAssertTrue(lanes.hashOnLoop)
        XCTAssertTrue(group.makeIterator().contains { $0 === third.eventLoop })
        let fourth = lanes.open()
        lanes.close(second)
        XCTAssertEqual(fourth.index == second.index, lanes.hashOnLoop, "a loop with another body stays busy")
        let fifth = lanes.open()
        XCTAssertTrue(lanes.hashOnLoop)
        for lane in [first, third, fourth, fifth] { lanes.close(lane) }
        XCTAssertFalse(lanes.hashOnLoop)
    }

    func testOneLoopHashesOnTheLoopWhileItReadsABody() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let lanes = BodyLanes(group: group)
        let lane = lanes.open()
        XCTAssertTrue(lanes.hashOnLoop)
        lanes.close(lane)
        XCTAssertFalse(lanes.hashOnLoop)
    }
}
