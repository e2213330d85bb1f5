import Foundation

/// RFC 3339 UTC with seconds, as every manifest and record writes times: `2026-11-22T03:00:00Z`.
public func formatTimestamp(_ date: Date) -> String {
    TimestampFormatters.shared.use { $0.whole.string(from: date) }
}

/// Parses RFC 3339 times as modelcast writes them (with or without fractional seconds).
public func parseTimestamp(_ text: String) -> Date? {
    TimestampFormatters.shared.use { $0.whole.date(from: text) ?? $0.fractional.date(from: text) }
}

/// The two formatters the functions above use, made once: making an ISO8601DateFormatter
/// costs more than using it (a page of 300 releases spent a fifth of its time making them).
/// Formatters are not documented thread-safe on every platform, so each use holds a lock.
// @unchecked: every use of a formatter holds `lock` (see above).
private final class TimestampFormatters: @unchecked Sendable {
    static let shared = TimestampFormatters()
    private let lock = NSLock()
    private let formatters: (whole: ISO8601DateFormatter, fractional: ISO8601DateFormatter)

    private init() {
        let whole = ISO8601DateFormatter()
        whole.timeZone = TimeZone(identifier: "UTC")
        whole.formatOptions = [.withInternetDateTime]
        let fractional = ISO8601DateFormatter()
        fractional.timeZone = TimeZone(identifier: "UTC")
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatters = (whole, fractional)
    }

    func use<T>(_ body: ((whole: ISO8601DateFormatter, fractional: ISO8601DateFormatter)) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(formatters)
    }
}

/// Parses `30d`, `12h`, `90m`, `3600s` or `2w` into seconds.
public func parseDuration(_ text: String) throws -> TimeInterval {
    let units: [Character: TimeInterval] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]
    guard let unit = text.last, let scale = units[unit], let count = Int(text.dropLast()), count > 0 else {
        throw FormatError.invalidValue("duration '\(text)' is not a positive whole number followed by s, m, h, d or w (e.g. 30d)")
    }
    return TimeInterval(count) * scale
}

/// Writes seconds as `parseDuration` reads them, in the largest of d, h, m, s that divides them.
public func formatDuration(_ seconds: TimeInterval) -> String {
    let whole = Int64(seconds.rounded())
    for (unit, scale) in [("d", Int64(86_400)), ("h", 3600), ("m", 60)] where whole != 0 && whole % scale == 0 {
        return "\(whole / scale)\(unit)"
    }
    return "\(whole)s"
}
