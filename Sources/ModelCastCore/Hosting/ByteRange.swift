import Foundation

/// How `serve` answers a GET's `Range` header for a representation of a known size
/// (RFC 9110 §14). One range is served; a request for several is answered with the
/// whole representation (a server may ignore Range, §14.2; S3 does not serve several
/// ranges either), where nginx sends multipart/byteranges.
enum ByteRangeAnswer: Equatable, Sendable {
    /// No Range, or one to ignore (another unit, an invalid or multi-range set): 200, the whole body.
    case whole
    /// 206 with these bytes (`Content-Range: bytes first-last/size`).
    case partial(ClosedRange<Int64>)
    /// 416 with `Content-Range: bytes */size`.
    case unsatisfiable

    /// The answer to `header` (the Range field value, nil when absent) for `size` bytes.
    ///
    /// - `a-b`: bytes a through b, b clamped to size - 1; `a-`: a to the end; a ≥ size is unsatisfiable.
    /// - `-n`: the last n bytes, all of them when n ≥ size; `-0` is unsatisfiable.
    /// - `b < a`, anything that is not one of those forms, or more than one range: ignored (200).
    ///
    /// Where nginx differs: it rejects an invalid range (`5-2`, `abc`) and a number beyond
    /// its `off_t` with 416, where RFC 9110 lets a server ignore the former and puts no
    /// limit on the latter; it rejects `0-1,` (RFC 9110 §5.6.1: empty list elements are
    /// accepted), and answers several ranges with multipart/byteranges.
    static func forRange(_ header: String?, size: Int64) -> ByteRangeAnswer {
        guard let header, let spec = singleByteRangeSpec(header) else { return .whole }
        switch spec {
        case .from(let first, let last):
            guard first < size else { return .unsatisfiable }
            return .partial(first...min(last ?? Int64.max, size - 1))
        case .suffix(let length):
            guard length > 0 else { return .unsatisfiable }
            // A non-zero suffix of an empty representation is satisfiable but has no
            // first-last to name: the (empty) whole is sent instead.
            guard size > 0 else { return .whole }
            return .partial(max(0, size - length)...(size - 1))
        }
    }

    enum Spec: Equatable {
        case from(Int64, Int64?)
        case suffix(Int64)
    }

    /// The one valid byte-range-spec in `header`, or nil when the header is to be ignored.
    static func singleByteRangeSpec(_ header: String) -> Spec? {
        guard let equals = header.firstIndex(of: "=") else { return nil }
        // range-unit is a case-insensitive token; an unknown unit MUST be ignored.
        guard header[..<equals].lowercased() == "bytes" else { return nil }
        // range-set = 1#range-spec; empty list elements (and the spaces around them) are allowed.
        let elements = header[header.index(after: equals)...]
            .split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " \t")) }
            .filter { !$0.isEmpty }
        guard elements.count == 1, let element = elements.first, let dash = element.firstIndex(of: "-") else { return nil }
        let before = element[..<dash]
        let after = element[element.index(after: dash)...]
        if before.isEmpty {
            guard let length = decimal(after) else { return nil }
            return .suffix(length)
        }
        guard let first = decimal(before) else { return nil }
        if after.isEmpty { return .from(first, nil) }
        guard let last = decimal(after), last >= first else { return nil }  // last < first: invalid (§14.1.1)
        return .from(first, last)
    }

    /// 1*DIGIT as a number, saturating at Int64.max (a position past any file); nil otherwise.
    static func decimal(_ text: Substring) -> Int64? {
        guard !text.isEmpty else { return nil }
        var value: Int64 = 0
        for byte in text.utf8 {
            guard (0x30...0x39).contains(byte) else { return nil }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int64(byte - 0x30))
            value = overflow1 || overflow2 ? Int64.max : sum
        }
        return value
    }
}

/// HTTP validators and conditional-request fields for a file (RFC 9110 §8.8, §13).
enum HTTPValidators {
    /// A strong entity tag from the file's identity: inode, modification time to the
    /// nanosecond, and size. A publish replaces a file by rename (a new inode), so the
    /// tag changes whenever the bytes may have.
    static func entityTag(inode: UInt64, modifiedSeconds: Int, modifiedNanoseconds: Int, size: Int64) -> String {
        let nanoseconds = Int64(modifiedSeconds) * 1_000_000_000 + Int64(modifiedNanoseconds)
        return "\"\(String(inode, radix: 16))-\(String(nanoseconds, radix: 16))-\(String(size, radix: 16))\""
    }

    /// The entity tags in an If-None-Match value, or nil for `*`.
    static func entityTags(_ value: String) -> [String]? {
        if value.trimmingCharacters(in: .whitespaces) == "*" { return nil }
        var tags: [String] = []
        var rest = Substring(value)
        while let open = rest.firstIndex(of: "\"") {
            let weak = rest[..<open].hasSuffix("W/")
            let afterOpen = rest.index(after: open)
            guard let close = rest[afterOpen...].firstIndex(of: "\"") else { break }
            tags.append((weak ? "W/" : "") + String(rest[open...close]))
            rest = rest[rest.index(after: close)...]
        }
        return tags
    }

    /// If-None-Match (weak comparison, §13.1.2): does `value` name the current `etag`?
    static func noneMatchHits(_ value: String, etag: String) -> Bool {
        guard let tags = entityTags(value) else { return true }
        let opaque = etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
        return tags.contains { ($0.hasPrefix("W/") ? String($0.dropFirst(2)) : $0) == opaque }
    }

    /// If-Range (§13.1.5): the Range applies only when the value is the current strong
    /// entity tag (strong comparison: a weak tag never matches) or the Last-Modified date.
    static func ifRangeMatches(_ value: String, etag: String, modifiedSeconds: Int) -> Bool {
        let value = value.trimmingCharacters(in: .whitespaces)
        if value.hasPrefix("\"") { return !etag.hasPrefix("W/") && value == etag }
        if value.hasPrefix("W/") { return false }
        return httpDate(value) == modifiedSeconds
    }

    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// IMF-fixdate, e.g. `Sun, 06 Nov 1994 08:49:37 GMT` (independent of the locale).
    static func imfFixdate(_ seconds: Int) -> String {
        var clock = time_t(seconds)
        var parts = tm()
        gmtime_r(&clock, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }

    /// Seconds since the epoch for an HTTP-date in any of its three forms (§5.6.7), or nil:
    /// IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`, the obsolete RFC 850 form
    /// `Sunday, 06-Nov-94 08:49:37 GMT` and asctime's `Sun Nov  6 08:49:37 1994`.
    static func httpDate(_ text: String) -> Int? {
        let words = text.split(separator: " ")
        let day: Substring, month: Substring, year: Substring, time: Substring
        switch words.count {
        case 6 where words[0].hasSuffix(",") && words[5] == "GMT":
            (day, month, year, time) = (words[1], words[2], words[3], words[4])
        case 4 where words[0].hasSuffix(",") && words[3] == "GMT":
            let parts = words[1].split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 3 else { return nil }
            (day, month, year, time) = (parts[0], parts[1], parts[2], words[2])
        case 5:
            (day, month, year, time) = (words[2], words[1], words[4], words[3])
        default:
            return nil
        }
        let clock = time.split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }),
              let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
              (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second),
              let monthIndex = months.firstIndex(where: { $0 == month }),
              (1...2).contains(day.count), let dayOfMonth = Int(day), (1...31).contains(dayOfMonth),
              year.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let yearNumber = Int(year) else { return nil }
        var fullYear: Int
        switch year.count {
        case 4: fullYear = yearNumber
        case 2:
            // RFC 850's two-digit year: the most recent year with those digits that is not
            // more than 50 years in the future (§5.6.7).
            var clockNow = time_t(Date().timeIntervalSince1970)
            var now = tm()
            gmtime_r(&clockNow, &now)
            let thisYear = Int(now.tm_year) + 1900
            fullYear = thisYear - thisYear % 100 + yearNumber
            if fullYear > thisYear + 50 { fullYear -= 100 }
        default: return nil
        }
        return daysSinceEpoch(year: fullYear, month: monthIndex + 1, day: dayOfMonth) * 86400 + hour * 3600 + minute * 60 + second
    }

    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar.
    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        // Count years from March so that February's leap day ends the year.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let shiftedMonth = (month + 9) % 12  // March = 0
        let dayOfYear = (153 * shiftedMonth + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
