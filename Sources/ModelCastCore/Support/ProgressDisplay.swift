import Foundation
import NIOConcurrencyHelpers

/// How progress shows on standard error (`--progress`).
package enum ProgressMode: String, CaseIterable, Sendable {
    /// A bar on a terminal, plain lines otherwise; quiet for work done within a second.
    case auto
    /// A bar redrawn in place (carriage returns), one line per item in flight.
    case bar
    /// A plain line every 10 % of an item or every 10 s, whichever comes first, and a
    /// final 100 % line: what a CI log can keep.
    case lines
    /// One JSON object per line: `start`, `progress` (every 1 % or 1 s) and `finish` events.
    case json
    /// Nothing.
    case none
}

/// What a progress display needs from its surroundings. Tests swap in a fake clock, a
/// fake terminal and a buffer, so the rate limits can be checked without sleeping.
package struct ProgressConsole: Sendable {
    /// True when the output is a terminal that understands carriage return and ANSI
    /// erase sequences (`auto` draws a bar there).
    package var isTerminal: Bool
    /// The terminal's width in columns; a bar line stays one column narrower so it never wraps.
    package var columns: @Sendable () -> Int
    /// Seconds on a clock that never goes back.
    package var now: @Sendable () -> TimeInterval
    /// Writes text as it is (no newline added).
    package var write: @Sendable (String) -> Void

    /// A console with these parts; `columns` defaults to 80.
    package init(isTerminal: Bool, columns: @escaping @Sendable () -> Int = { 80 },
                now: @escaping @Sendable () -> TimeInterval, write: @escaping @Sendable (String) -> Void) {
        self.isTerminal = isTerminal
        self.columns = columns
        self.now = now
        self.write = write
    }
}

/// Decides when a line-by-line display (`lines`, `json`) reports an item: when its
/// percentage crosses the next multiple of `stepPercent`, or when `interval` seconds have
/// passed since the last report while the work advances, and never before the item has
/// lasted `grace` seconds. Pure: the caller passes the time.
package struct ProgressLineLimiter: Sendable {
    /// The item's size in bytes.
    package let total: Int64
    /// A line each time the percentage reaches the next multiple of this (10: 10 %, 20 %, …).
    package let stepPercent: Int
    /// The longest silence, in seconds, while the work advances.
    package let interval: TimeInterval
    /// Seconds the item must last before its first line.
    package let grace: TimeInterval
    /// When the item started, on the caller's clock.
    package let start: TimeInterval
    /// Steps of `stepPercent` already reported.
    private var reportedSteps = 0
    private var lastReport: TimeInterval
    /// Whether any line was reported.
    package private(set) var reported = false
    /// Whether the 100 % line was reported (nothing follows it).
    package private(set) var complete = false

    /// A limiter for an item of `total` bytes started at `start`.
    package init(total: Int64, start: TimeInterval, stepPercent: Int = 10, interval: TimeInterval = 10, grace: TimeInterval = 0) {
        self.total = total
        self.start = start
        self.stepPercent = max(stepPercent, 1)
        self.interval = interval
        self.grace = grace
        lastReport = start
    }

    /// Whole percent of `done` out of the total: 100 only once everything is done.
    package func percent(_ done: Int64) -> Int {
        guard total > 0 else { return 100 }
        if done >= total { return 100 }
        return min(99, Int(Double(max(done, 0)) * 100 / Double(total)))
    }

    /// True when a line is due now that `done` bytes are done at `now`; records it as reported.
    package mutating func advance(done: Int64, now: TimeInterval) -> Bool {
        guard !complete, now - start >= grace else { return false }
        let percent = percent(done)
        let steps = percent / stepPercent
        guard steps > reportedSteps || now - lastReport >= interval else { return false }
        record(percent: percent, steps: steps, now: now)
        return true
    }

    /// True when the final 100 % line is due as the item ends with `done` bytes done: the
    /// work is complete, that line was not reported yet, and the item reported before or
    /// lasted `grace` seconds (quick work stays quiet). An item that ends short reports no
    /// final line; its failure is said elsewhere.
    package mutating func finish(done: Int64, now: TimeInterval) -> Bool {
        guard !complete, percent(done) == 100, reported || now - start >= grace else { return false }
        record(percent: 100, steps: 100 / stepPercent, now: now)
        return true
    }

    private mutating func record(percent: Int, steps: Int, now: TimeInterval) {
        reportedSteps = steps
        lastReport = now
        reported = true
        complete = percent == 100
    }
}

/// Shows the progress the core reports, as `--progress` chose, on a `ProgressConsole`.
/// Every item reports through one display, so concurrent items (verify's downloads,
/// uploads) never interleave their output: a bar block is redrawn whole, lines are
/// written whole. `log` writes a message above a drawn bar instead of through it.
package final class ProgressDisplay: Sendable {
    /// Seconds before `auto` shows anything: quick work stays quiet.
    package static let autoGrace: TimeInterval = 1
    /// The most items a bar block shows; the rest are summed on one more line.
    static let maximumBarLines = 6

    enum Style: Equatable {
        case bar(grace: TimeInterval), lines(grace: TimeInterval), json, none
    }

    struct Item {
        let id: Int
        let label: String
        let total: Int64
        let start: TimeInterval
        var done: Int64 = 0
        /// Of `done`, what was done before this run: never part of a rate.
        var before: Int64 = 0
        var limiter: ProgressLineLimiter
        /// Done and time at the last line (lines mode shows the rate since then).
        var mark: (done: Int64, time: TimeInterval)
    }

    struct State {
        var nextID = 1
        var items: [Item] = []
        var lastDraw = -Double.infinity
        var drawnLines = 0
    }

    let style: Style
    private let console: ProgressConsole
    private let state = NIOLockedValueBox(State())

    /// `auto` picks a bar when `console` is a terminal and lines otherwise.
    package init(mode: ProgressMode, console: ProgressConsole) {
        switch mode {
        case .auto: style = console.isTerminal ? .bar(grace: Self.autoGrace) : .lines(grace: Self.autoGrace)
        case .bar: style = .bar(grace: 0)
        case .lines: style = .lines(grace: 0)
        case .json: style = .json
        case .none: style = .none
        }
        self.console = console
    }

    /// The factory to hand the core; nil with `none`.
    package var factory: ProgressFactory? {
        guard style != .none else { return nil }
        return { [self] label, total in start(label: label, total: total) }
    }

    /// Writes `line` (a log message) and a newline, clearing a drawn bar first and
    /// drawing it again below.
    package func log(_ line: String) {
        state.withLockedValue { state in
            let hadBar = state.drawnLines > 0
            if hadBar { console.write(clearBlock(&state)) }
            console.write(line + "\n")
            if hadBar { draw(&state, now: console.now()) }
        }
    }

    func start(label: String, total: Int64) -> any ProgressReporter {
        let now = console.now()
        // Labels name files: a control character would move the cursor or break a line.
        let label = escapingControlCharacters(label)
        let id = state.withLockedValue { state -> Int in
            let id = state.nextID
            state.nextID += 1
            let limiter: ProgressLineLimiter
            switch style {
            case .json: limiter = ProgressLineLimiter(total: total, start: now, stepPercent: 1, interval: 1)
            case .lines(let grace): limiter = ProgressLineLimiter(total: total, start: now, grace: grace)
            case .bar, .none: limiter = ProgressLineLimiter(total: total, start: now)
            }
            state.items.append(Item(id: id, label: label, total: total, start: now, limiter: limiter, mark: (0, now)))
            if style == .json {
                console.write(jsonEvent("start", id: id, label: label, fields: [("total", total)]))
            }
            return id
        }
        return ProgressItem(display: self, id: id)
    }

    func advance(_ id: Int, by bytes: Int, beforeThisRun: Bool = false) {
        let now = console.now()
        state.withLockedValue { state in
            guard let index = state.items.firstIndex(where: { $0.id == id }) else { return }
            state.items[index].done += Int64(bytes)
            if beforeThisRun {
                // Moves the rate's starting point along: the line mode's rate is since the mark.
                state.items[index].before += Int64(bytes)
                state.items[index].mark.done += Int64(bytes)
            }
            switch style {
            case .bar:
                // One redraw at most every tenth of a second, whichever item advanced.
                if now - state.lastDraw >= 0.1 { draw(&state, now: now) }
            case .lines:
                let item = state.items[index]
                if state.items[index].limiter.advance(done: item.done, now: now) {
                    console.write(line(for: item, now: now, since: item.mark) + "\n")
                    state.items[index].mark = (item.done, now)
                }
            case .json:
                let item = state.items[index]
                if state.items[index].limiter.advance(done: item.done, now: now) {
                    console.write(jsonEvent("progress", id: id, label: item.label, fields: [("done", item.done), ("total", item.total)]))
                }
            case .none:
                break
            }
        }
    }

    func finish(_ id: Int) {
        let now = console.now()
        state.withLockedValue { state in
            guard let index = state.items.firstIndex(where: { $0.id == id }) else { return }
            var item = state.items.remove(at: index)
            switch style {
            case .bar:
                // The finished item's line goes; the others are drawn again at once.
                if state.drawnLines > 0 { draw(&state, now: now) }
            case .lines:
                if item.limiter.finish(done: item.done, now: now) {
                    console.write(line(for: item, now: now, since: (item.before, item.start)) + "\n")
                }
            case .json:
                console.write(jsonEvent("finish", id: id, label: item.label, fields: [("done", item.done), ("total", item.total)]))
            case .none:
                break
            }
        }
    }

    // MARK: Lines

    /// `uploading models/m/1.2.0/m.gguf 3.1/7.8 GiB 41% 112.0 MiB/s`: the rate since `since`.
    func line(for item: Item, now: TimeInterval, since: (done: Int64, time: TimeInterval)) -> String {
        let rate = Double(item.done - since.done) / max(now - since.time, 0.001)
        return "\(item.label) \(formatByteFraction(item.done, of: item.total)) \(item.limiter.percent(item.done))% \(formatBytes(Int64(max(rate, 0))))/s"
    }

    // MARK: JSON

    private func jsonEvent(_ event: String, id: Int, label: String, fields: [(String, Int64)]) -> String {
        var text = "{\"event\":\(jsonString(event)),\"id\":\(id),\"label\":\(jsonString(label))"
        for (key, value) in fields { text += ",\(jsonString(key)):\(value)" }
        return text + "}\n"
    }

    // MARK: Bar

    /// Redraws the block of bar lines in place: up to the block's first line, each line
    /// erased to its end, anything left below erased. Only items that have lasted the
    /// grace period show.
    private func draw(_ state: inout State, now: TimeInterval) {
        guard case .bar(let grace) = style else { return }
        let visible = state.items.filter { now - $0.start >= grace }
        guard !visible.isEmpty else {
            if state.drawnLines > 0 { console.write(clearBlock(&state)) }
            return
        }
        let width = max(console.columns() - 1, 20)
        var lines = visible.prefix(Self.maximumBarLines).map { barLine(for: $0, now: now, width: width) }
        if visible.count > Self.maximumBarLines {
            let rest = visible.dropFirst(Self.maximumBarLines)
            let done = rest.reduce(Int64(0)) { $0 + $1.done }
            let total = rest.reduce(Int64(0)) { $0 + $1.total }
            lines.append(String("… and \(rest.count) more, \(formatByteFraction(done, of: total))".prefix(width)))
        }
        var out = "\r"
        if state.drawnLines > 1 { out += "\u{1B}[\(state.drawnLines - 1)A" }
        out += lines.joined(separator: "\u{1B}[K\n\r") + "\u{1B}[K"
        if lines.count < state.drawnLines { out += "\u{1B}[J" }
        console.write(out)
        state.drawnLines = lines.count
        state.lastDraw = now
    }

    /// Back to the block's first line and erase it and everything below.
    private func clearBlock(_ state: inout State) -> String {
        defer { state.drawnLines = 0 }
        return "\r" + (state.drawnLines > 1 ? "\u{1B}[\(state.drawnLines - 1)A" : "") + "\u{1B}[J"
    }

    /// `packing m.gguf [#########---------------------] 31% 2.4/7.8 GiB 112.0 MiB/s ETA 0:49`,
    /// at most `width` columns: the label is shortened from the left when it must be.
    func barLine(for item: Item, now: TimeInterval, width: Int) -> String {
        let percent = item.limiter.percent(item.done)
        let elapsed = max(now - item.start, 0.001)
        let rate = Double(item.done - item.before) / elapsed
        var numbers = " \(percent)% \(formatByteFraction(item.done, of: item.total)) \(formatBytes(Int64(rate)))/s"
        if rate > 0, item.done < item.total {
            numbers += " ETA " + formatClock(Double(item.total - item.done) / rate)
        }
        // The bar takes what the numbers and (up to 24 columns of) the label leave, 10 to 30
        // columns; narrower terminals lose the bar before the label.
        let barWidth = min(30, width - numbers.count - min(item.label.count, 24) - 3)
        var tail = numbers
        if barWidth >= 10 {
            let filled = barWidth * percent / 100
            tail = " [" + String(repeating: "#", count: filled) + String(repeating: "-", count: barWidth - filled) + "]" + numbers
        }
        let labelRoom = width - tail.count
        guard labelRoom > 1 else { return String(tail.prefix(width)) }
        let label = item.label.count <= labelRoom ? item.label : "…" + item.label.suffix(labelRoom - 1)
        return label + tail
    }
}

/// One item's reporter: forwards to the display, which owns all the state.
final class ProgressItem: ProgressReporter {
    private let display: ProgressDisplay
    private let id: Int

    init(display: ProgressDisplay, id: Int) {
        self.display = display
        self.id = id
    }

    func advance(by bytes: Int) { display.advance(id, by: bytes) }
    func alreadyDone(_ bytes: Int) { display.advance(id, by: bytes, beforeThisRun: true) }
    func finish() { display.finish(id) }
}

/// "3.1/7.8 GiB": both counts in the total's unit.
package func formatByteFraction(_ done: Int64, of total: Int64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"]
    var unit = 0
    var scale = 1.0
    while Double(total) / scale >= 1024 && unit < units.count - 1 {
        scale *= 1024
        unit += 1
    }
    if unit == 0 { return "\(done)/\(total) B" }
    return String(format: "%.1f/%.1f %@", Double(done) / scale, Double(total) / scale, units[unit])
}

/// "0:42", "12:05", "1:02:03" for a number of seconds.
func formatClock(_ seconds: Double) -> String {
    let whole = Int(min(seconds.rounded(.up), 359_999))
    let (h, m, s) = (whole / 3600, whole / 60 % 60, whole % 60)
    return h > 0 ? String(format: "%d:%02d:%02d", h, m, s) : String(format: "%d:%02d", m, s)
}

/// `text` as a JSON string literal (Support sits below the Manifest folder's JSONValue).
private func jsonString(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where scalar.value < 0x20 || scalar.value == 0x7F: out += String(format: "\\u%04x", scalar.value)
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}
