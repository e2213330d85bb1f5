import Foundation
import NIOConcurrencyHelpers
import XCTest
@testable import ModelCastCore

/// `--progress` displays against a fake clock and terminal: the line mode's limits
/// (10 % or 10 s, a final 100 % line, quiet quick work), the bar's in-place redraws and
/// the JSON events, without sleeping.
final class ProgressDisplayTests: XCTestCase {
    /// A console whose clock the test moves and whose output it reads.
    final class FakeConsole: Sendable {
        private let clock = NIOLockedValueBox(0.0)
        private let written = NIOLockedValueBox<[String]>([])
        let isTerminal: Bool
        let columns: Int

        init(isTerminal: Bool, columns: Int = 100) {
            self.isTerminal = isTerminal
            self.columns = columns
        }

        var console: ProgressConsole {
            ProgressConsole(isTerminal: isTerminal, columns: { [columns] in columns }, now: { self.clock.withLockedValue { $0 } },
                            write: { text in self.written.withLockedValue { $0.append(text) } })
        }

        func tick(_ seconds: Double) { clock.withLockedValue { $0 += seconds } }
        var writes: [String] { written.withLockedValue { $0 } }
        var text: String { writes.joined() }
        var lines: [String] { text.split(separator: "\n").map(String.init) }
    }

    /// The percentage a line-mode line shows ("… 41% …").
    func percent(in line: String) -> Int? {
        line.split(separator: " ").first { $0.hasSuffix("%") }.flatMap { Int($0.dropLast()) }
    }

    // MARK: The limiter

    func testLinesEveryTenPercentThenOneFinal100() {
        var limiter = ProgressLineLimiter(total: 1_000_003, start: 0)
        var done: Int64 = 0
        var percents: [Int] = []
        // Small uneven chunks, no time passing: only the 10 % steps report.
        while done < limiter.total {
            done = min(done + 4_099, limiter.total)
            if limiter.advance(done: done, now: 0) { percents.append(limiter.percent(done)) }
        }
        XCTAssertEqual(percents.map { $0 / 10 }, Array(1...10), "\(percents)")
        XCTAssertEqual(percents.last, 100)
        XCTAssertFalse(limiter.finish(done: done, now: 0), "the 100 % line was already reported")
    }

    func testASlowItemReportsAtLeastEveryTenSeconds() {
        var limiter = ProgressLineLimiter(total: 100, start: 0)
        var reports: [(time: Double, percent: Int)] = []
        // 1 % every 3 s: 300 s in all.
        for second in stride(from: 3, through: 300, by: 3) {
            let done = Int64(second / 3)
            if limiter.advance(done: done, now: Double(second)) { reports.append((Double(second), limiter.percent(done))) }
        }
        var previous = (time: 0.0, percent: 0)
        for report in reports {
            let gap = report.time - previous.time
            XCTAssertLessThanOrEqual(gap, 12, "a silence of \(gap) s at \(report.time) s")
            XCTAssertTrue(gap >= 10 || report.percent / 10 > previous.percent / 10, "a line too soon at \(report.time) s: \(reports)")
            previous = report
        }
        XCTAssertEqual(reports.last?.percent, 100)
        XCTAssertLessThanOrEqual(reports.count, 30 + 10)
    }

    func testQuickWorkStaysQuietWithAGracePeriod() {
        var quick = ProgressLineLimiter(total: 100, start: 0, grace: 1)
        XCTAssertFalse(quick.advance(done: 50, now: 0.2))
        XCTAssertFalse(quick.advance(done: 100, now: 0.5))
        XCTAssertFalse(quick.finish(done: 100, now: 0.6))

        var slow = ProgressLineLimiter(total: 100, start: 0, grace: 1)
        XCTAssertFalse(slow.advance(done: 35, now: 0.5))
        XCTAssertTrue(slow.advance(done: 36, now: 1.5), "past the grace period the step already crossed is due")
        XCTAssertEqual(slow.percent(36), 36)
        XCTAssertFalse(slow.advance(done: 39, now: 2))
        XCTAssertTrue(slow.finish(done: 100, now: 2.5))

        // Done within the grace period but finished after it: only the final line.
        var late = ProgressLineLimiter(total: 100, start: 0, grace: 1)
        XCTAssertFalse(late.advance(done: 100, now: 0.5))
        XCTAssertTrue(late.finish(done: 100, now: 1.2))
    }

    func testAnItemThatEndsShortHasNoFinalLine() {
        var limiter = ProgressLineLimiter(total: 100, start: 0)
        XCTAssertTrue(limiter.advance(done: 40, now: 1))
        XCTAssertFalse(limiter.finish(done: 40, now: 2))
        XCTAssertEqual(limiter.percent(99), 99)
        XCTAssertEqual(limiter.percent(200), 100)
        XCTAssertEqual(ProgressLineLimiter(total: 1 << 62, start: 0).percent((1 << 62) - 1), 99, "100 % only when all is done")
    }

    // MARK: The displays

    func testAutoPicksABarOnATerminalAndLinesElsewhere() {
        XCTAssertEqual(ProgressDisplay(mode: .auto, console: FakeConsole(isTerminal: true).console).style, .bar(grace: 1))
        XCTAssertEqual(ProgressDisplay(mode: .auto, console: FakeConsole(isTerminal: false).console).style, .lines(grace: 1))
        XCTAssertEqual(ProgressDisplay(mode: .bar, console: FakeConsole(isTerminal: false).console).style, .bar(grace: 0))
        XCTAssertEqual(ProgressDisplay(mode: .lines, console: FakeConsole(isTerminal: true).console).style, .lines(grace: 0))
        XCTAssertNil(ProgressDisplay(mode: .none, console: FakeConsole(isTerminal: true).console).factory)
    }

    func testConcurrentItemsWriteWholeLines() throws {
        let fake = FakeConsole(isTerminal: false)
        let factory = try XCTUnwrap(ProgressDisplay(mode: .lines, console: fake.console).factory)
        let items = (0..<4).map { factory("uploading models/m/1.0.0/part-\($0).bin", 64 << 20) }
        DispatchQueue.concurrentPerform(iterations: 4) { index in
            for _ in 0..<64 { items[index]?.advance(by: 1 << 20) }
        }
        items.forEach { $0?.finish() }
        XCTAssertTrue(fake.writes.allSatisfy { $0.hasSuffix("\n") && $0.dropLast().contains("\n") == false }, "\(fake.writes)")
        for index in 0..<4 {
            let lines = fake.lines.filter { $0.hasPrefix("uploading models/m/1.0.0/part-\(index).bin ") }
            let percents = lines.compactMap(percent(in:))
            XCTAssertEqual(percents.count, lines.count)
            XCTAssertEqual(percents, percents.sorted().reduce(into: [Int]()) { if $0.last != $1 { $0.append($1) } }, "strictly increasing: \(lines)")
            XCTAssertLessThanOrEqual(lines.count, 10)
            XCTAssertTrue(lines.last?.hasPrefix("uploading models/m/1.0.0/part-\(index).bin 64.0/64.0 MiB 100% ") == true, "\(lines)")
        }
    }

    func testTheBarRedrawsOneLineInPlace() throws {
        let fake = FakeConsole(isTerminal: true, columns: 100)
        let factory = try XCTUnwrap(ProgressDisplay(mode: .auto, console: fake.console).factory)
        let item = try XCTUnwrap(factory("packing a-model-with-a-rather-long-file-name.gguf", 100 << 20))
        item.advance(by: 1 << 20)
        XCTAssertEqual(fake.writes, [], "nothing within the first second")
        fake.tick(1.5)
        for _ in 0..<9 { item.advance(by: 1 << 20) }
        XCTAssertEqual(fake.writes.count, 1, "at most one redraw per tenth of a second")
        fake.tick(0.5)
        item.advance(by: 40 << 20)
        item.finish()
        XCTAssertEqual(fake.writes.count, 3)
        XCTAssertFalse(fake.text.contains("\n"), "the bar never adds a line: \(fake.writes)")
        for draw in fake.writes.dropLast() {
            XCTAssertTrue(draw.hasPrefix("\r") && draw.hasSuffix("\u{1B}[K"), draw)
            XCTAssertLessThanOrEqual(draw.dropFirst().dropLast(3).count, 99, "wider than the terminal: \(draw)")
            XCTAssertTrue(draw.hasPrefix("\r…") && draw.contains("-file-name.gguf ["), "the label is shortened from the left: \(draw)")
        }
        XCTAssertTrue(fake.writes[1].contains(" 50% 50.0/100.0 MiB 25.0 MiB/s ETA 0:02"), fake.writes[1])
        XCTAssertEqual(fake.writes.last, "\r\u{1B}[J", "finishing clears the bar")
    }

    /// Issue 47: a resumed S3 upload showed 46.9 GiB/s, its stored parts counted as sent.
    /// Bytes done before this run count toward the fraction, never toward the rate.
    func testBytesDoneBeforeThisRunAreNotARate() throws {
        for terminal in [false, true] {
            let fake = FakeConsole(isTerminal: terminal)
            let factory = try XCTUnwrap(ProgressDisplay(mode: terminal ? .bar : .lines, console: fake.console).factory)
            let item = try XCTUnwrap(factory("uploading m.gguf", 100 << 20))
            item.alreadyDone(90 << 20)
            fake.tick(1)
            item.advance(by: 5 << 20)
            fake.tick(1)
            item.advance(by: 5 << 20)
            item.finish()
            let shown = fake.text
            XCTAssertTrue(shown.contains("5.0 MiB/s"), "\(terminal): \(shown)")
            XCTAssertFalse(shown.contains("GiB/s") || shown.contains("95.0 MiB/s") || shown.contains("50.0 MiB/s"), "\(terminal): \(shown)")
            XCTAssertTrue(shown.contains("100.0/100.0 MiB") || shown.contains("95.0/100.0 MiB"), "\(terminal): \(shown)")
        }
    }

    func testConcurrentItemsShareOneRedrawnBlock() throws {
        let fake = FakeConsole(isTerminal: true)
        let display = ProgressDisplay(mode: .bar, console: fake.console)
        let factory = try XCTUnwrap(display.factory)
        let a = try XCTUnwrap(factory("fetching a", 100))
        let b = try XCTUnwrap(factory("fetching b", 100))
        a.advance(by: 10)
        XCTAssertEqual(fake.writes.last?.components(separatedBy: "\n").count, 2, "one line per item")
        fake.tick(0.2)
        b.advance(by: 20)
        let redraw = try XCTUnwrap(fake.writes.last)
        XCTAssertTrue(redraw.hasPrefix("\r\u{1B}[1A"), "back up to the block's first line: \(redraw)")
        display.log("warning: something")
        XCTAssertEqual(fake.writes.suffix(3).first, "\r\u{1B}[1A\u{1B}[J", "the block is cleared before the message")
        XCTAssertEqual(fake.writes.suffix(2).first, "warning: something\n")
        a.finish()
        let shrunk = try XCTUnwrap(fake.writes.last)
        XCTAssertTrue(shrunk.hasPrefix("\r\u{1B}[1A") && shrunk.hasSuffix("\u{1B}[J") && !shrunk.contains("\n"), "one line left: \(shrunk)")
        XCTAssertTrue(shrunk.contains("fetching b"))
        b.finish()
        XCTAssertEqual(fake.writes.last, "\r\u{1B}[J")
    }

    func testJSONEventsAreOneObjectPerLine() throws {
        let fake = FakeConsole(isTerminal: true)
        let factory = try XCTUnwrap(ProgressDisplay(mode: .json, console: fake.console).factory)
        let item = try XCTUnwrap(factory("hashing \"odd\"\nname", 1000))
        for _ in 0..<1000 { item.advance(by: 1) }
        item.finish()
        let events = try fake.lines.map { line in
            try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], line)
        }
        XCTAssertEqual(events.first?["event"] as? String, "start")
        XCTAssertEqual(events.first?["total"] as? Int, 1000)
        XCTAssertEqual(events.first?["label"] as? String, "hashing \"odd\"\\nname", "control characters are escaped as in every message")
        let progress = events.filter { $0["event"] as? String == "progress" }
        XCTAssertEqual(progress.count, 100, "every 1 %")
        XCTAssertEqual(progress.compactMap { $0["done"] as? Int }, Array(stride(from: 10, through: 1000, by: 10)))
        XCTAssertEqual(events.last?["event"] as? String, "finish")
        XCTAssertEqual(events.last?["done"] as? Int, 1000)
        XCTAssertEqual(Set(events.compactMap { $0["id"] as? Int }), [1])
    }

    func testFormats() {
        XCTAssertEqual(formatByteFraction(3_328_599_654, of: 8_375_186_227), "3.1/7.8 GiB")
        XCTAssertEqual(formatByteFraction(12, of: 1000), "12/1000 B")
        XCTAssertEqual(formatClock(42), "0:42")
        XCTAssertEqual(formatClock(3723), "1:02:03")
    }
}
