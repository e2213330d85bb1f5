import Foundation

/// The rollout curve as inline SVG: the share of devices on the candidate over time as a
/// step line (solid up to the page's moment, dashed after it, where a schedule has steps
/// to come), the schedule the rollout was given as a faint dashed line, and "now".
struct RolloutChart {
    let rollout: RolloutReport
    let now: Date

    private let width = 600.0, height = 220.0
    private let left = 44.0, right = 16.0, top = 14.0, bottom = 40.0

    var svg: String {
        let points = rollout.curve.compactMap { point in parseTimestamp(point.at).map { (time: $0, percent: point.percent) } }
        let planned = (rollout.schedule ?? []).compactMap { point in parseTimestamp(point.at).map { (time: $0, percent: point.percent) } }
        let times = points.map(\.time) + planned.map(\.time) + [now] + [parseTimestamp(rollout.startedAt)].compactMap { $0 }
        var start = times.min()!, end = times.max()!
        // Room on both sides, and a day's width at least (a rollout a minute old is still a line).
        let span = max(end.timeIntervalSince(start), 86_400)
        start = start.addingTimeInterval(-span * 0.04)
        end = end.addingTimeInterval(span * 0.08)
        let x = { (date: Date) -> Double in self.left + (date.timeIntervalSince(start) / end.timeIntervalSince(start)) * (self.width - self.left - self.right) }
        let y = { (percent: Double) -> Double in self.top + (1 - percent / 100) * (self.height - self.top - self.bottom) }
        var svg = """
            <svg class="curve" viewBox="0 0 \(n(width)) \(n(height))" role="img" aria-labelledby="\(id)-title">\
            <title id="\(id)-title">\(html(summary))</title>
            """
        for grid in [0.0, 25, 50, 75, 100] {
            svg += "<line class=\"grid\" x1=\"\(n(left))\" x2=\"\(n(width - right))\" y1=\"\(n(y(grid)))\" y2=\"\(n(y(grid)))\"/>"
            svg += "<text class=\"axis\" x=\"\(n(left - 6))\" y=\"\(n(y(grid) + 4))\" text-anchor=\"end\">\(Int(grid))%</text>"
        }
        svg += "<text class=\"axis\" x=\"\(n(left))\" y=\"\(n(height - 8))\">\(pageTime(start))</text>"
        svg += "<text class=\"axis\" x=\"\(n(width - right))\" y=\"\(n(height - 8))\" text-anchor=\"end\">\(pageTime(end))</text>"
        if !planned.isEmpty {
            svg += "<path class=\"planned\" d=\"\(steps(planned, from: planned[0].time, to: end, x: x, y: y))\"/>"
        }
        if let first = points.first {
            let past = points.filter { $0.time <= now }
            if !past.isEmpty {
                svg += "<path class=\"actual\" d=\"\(steps(past, from: first.time, to: max(now, first.time), x: x, y: y))\"/>"
            }
            let current = past.last?.percent ?? 0
            let future = [(time: now, percent: current)] + points.filter { $0.time > now }
            if future.count > 1 || past.isEmpty {
                svg += "<path class=\"future\" d=\"\(steps(future, from: now, to: end, x: x, y: y))\"/>"
            }
            for point in points {
                svg += "<circle class=\"\(point.time <= now ? "step" : "step future")\" cx=\"\(n(x(point.time)))\" cy=\"\(n(y(point.percent)))\" r=\"3.5\"/>"
            }
        }
        let nowX = x(now)
        svg += "<line class=\"now\" x1=\"\(n(nowX))\" x2=\"\(n(nowX))\" y1=\"\(n(top - 4))\" y2=\"\(n(height - bottom + 4))\"/>"
        svg += "<text class=\"now-label\" x=\"\(n(nowX))\" y=\"\(n(height - bottom + 16))\" text-anchor=\"middle\">now · \(pagePercent(rollout.percentNow))%</text>"
        return svg + "</svg>"
    }

    private var id: String { htmlID("curve", String(rollout.candidateSequence)) }

    /// The chart in words (its accessible name).
    private var summary: String {
        "Share of devices on sequence \(rollout.candidateSequence) over time: " + rollout.curve.map { "\(pagePercent($0.percent))% from \($0.at)" }.joined(separator: ", ")
    }

    /// A step path through `points` (each share holds until the next point), from `from` to `to`.
    private func steps(_ points: [(time: Date, percent: Double)], from: Date, to: Date, x: (Date) -> Double, y: (Double) -> Double) -> String {
        var d = "M\(n(x(max(from, points[0].time)))) \(n(y(points[0].percent)))"
        for point in points.dropFirst() {
            d += " H\(n(x(point.time))) V\(n(y(point.percent)))"
        }
        d += " H\(n(x(max(to, points.last!.time))))"
        return d
    }

    /// A coordinate with one decimal, the same text on every machine.
    private func n(_ value: Double) -> String {
        String(format: "%.1f", value)
    }
}
