import Foundation

/// Text from a target made safe for HTML: the five characters that end text or an
/// attribute become entities, and control and format characters (a terminal escape, a
/// right-to-left override) are shown as `\u{1B}`. Every value the release page draws
/// passes through here; only the page's own markup does not.
func html(_ text: String) -> String {
    var out = ""
    out.reserveCapacity(text.utf8.count)
    // A tab (a trusted comment's separator) reads as a space; other controls are shown escaped.
    for scalar in printable(text.replacingOccurrences(of: "\t", with: " ")).unicodeScalars {
        switch scalar {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&#39;"
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out
}

/// A name made into an HTML id: lowercase letters, digits and '-' kept, anything else '-'.
/// Channel names already are such names; this keeps a page's ids valid whatever they hold.
func htmlID(_ parts: String...) -> String {
    parts.map { part in
        String(part.unicodeScalars.map { scalar -> Character in
            let ok = ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "-"
            return ok ? Character(scalar) : "-"
        })
    }.joined(separator: "-")
}

/// "2026-09-21 12:00 UTC": a moment as the page prints it (the same on every machine).
func pageTime(_ date: Date) -> String {
    // formatTimestamp's `2026-09-21T12:00:00Z`, to the minute.
    formatTimestamp(date).prefix(16).replacingOccurrences(of: "T", with: " ") + " UTC"
}

/// An RFC 3339 time from a target as the page prints it; text that is no time, escaped as it is.
func pageTime(_ text: String) -> String {
    parseTimestamp(text).map(pageTime) ?? html(text)
}

/// "12.5 MiB (13,107,200 bytes)".
func pageSize(_ bytes: Int64) -> String {
    let exact = bytes < 1024 ? "" : " (\(groupedDigits(bytes)) bytes)"
    return (bytes < 1024 ? "\(bytes) bytes" : formatBytes(bytes)) + exact
}

private func groupedDigits(_ value: Int64) -> String {
    let digits = String(value.magnitude)
    var out = ""
    for (index, digit) in digits.enumerated() {
        if index > 0, (digits.count - index) % 3 == 0 { out += "," }
        out.append(digit)
    }
    return (value < 0 ? "-" : "") + out
}

/// "10", "0.5", "12.25": a percentage as the page prints it.
func pagePercent(_ percent: Double) -> String {
    Rollout.percentText(Int((percent * 100).rounded()))
}
