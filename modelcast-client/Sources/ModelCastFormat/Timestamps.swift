import Foundation

/// RFC 3339 UTC with seconds, as every manifest and record writes times: `2026-11-22T03:00:00Z`.
public func formatTimestamp(_ date: Date) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.formatOptions = [.withInternetDateTime]
    return formatter.string(from: date)
}

/// Parses RFC 3339 times as modelcast writes them (with or without fractional seconds).
public func parseTimestamp(_ text: String) -> Date? {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime]
    if let date = formatter.date(from: text) { return date }
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter.date(from: text)
}

/// Parses `30d`, `12h`, `90m`, `3600s` or `2w` into seconds.
public func parseDuration(_ text: String) throws -> TimeInterval {
    let units: [Character: TimeInterval] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]
    guard let unit = text.last, let scale = units[unit], let count = Int(text.dropLast()), count > 0 else {
        throw ModelCastError.usage("duration '\(text)' is not a positive whole number followed by s, m, h, d or w (e.g. 30d)")
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
