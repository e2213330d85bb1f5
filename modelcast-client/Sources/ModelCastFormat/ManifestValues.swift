import Foundation

// The values a manifest may hold, as types that cannot hold anything else. Every string
// and number of a manifest is hostile until one of these accepts it: publish builds them
// before writing, verify and the client when they read. Nothing that has not passed
// through them becomes a path, a URL or a byte count.

/// Why a manifest value was refused: the field's JSON path, the value (quoted, with
/// control characters escaped and long values cut), and the rule it breaks.
public struct ManifestValueError: Error, Equatable, Sendable, CustomStringConvertible, LocalizedError {
    /// Where the value is, `models.m.files[0].sha256`.
    public let field: String
    /// The value as it can be shown: escaped and at most about 80 characters.
    public let value: String
    public let rule: String

    public init(field: String, value: String, rule: String) {
        self.field = field
        self.value = value
        self.rule = rule
    }

    public var description: String { "\(field): \(value) \(rule)" }
    public var errorDescription: String? { description }

    /// The same error for a value found at `field` (a type's own checks do not know where it sits).
    func at(_ field: String) -> ManifestValueError { ManifestValueError(field: field, value: value, rule: rule) }
}

/// A value quoted for a message: `'text'`, with every control, format or non-ASCII space
/// character written as `\u{…}`, cut after `limit` characters.
public func quotedValue(_ text: String, limit: Int = 80) -> String {
    var out = ""
    var count = 0
    for scalar in text.unicodeScalars {
        if count == limit { out += "…(\(text.unicodeScalars.count) characters)"; break }
        if ManifestText.isHidden(scalar) || scalar == "'" || scalar == "\\" {
            out += "\\u{" + String(scalar.value, radix: 16) + "}"
        } else {
            out.unicodeScalars.append(scalar)
        }
        count += 1
    }
    return "'" + out + "'"
}

/// Character rules shared by the value types (and by the publisher's messages, which
/// escape the same characters `quotedValue` does).
public enum ManifestText {
    /// Control (Cc), format (Cf: bidi overrides, zero-width joiners…), separators other than
    /// the space, private-use, unassigned and surrogate code points: invisible or rendered
    /// out of order, never part of a name a person can check.
    public static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .unassigned, .surrogate: return true
        case .spaceSeparator: return scalar != " "
        default: return false
        }
    }

    /// Characters that look like `/`, `\` or `.` in a path: accepted in no path segment
    /// (the slashes) or not as a whole segment (the dots).
    static let slashLookalikes: Set<Unicode.Scalar> = ["\u{2215}", "\u{2044}", "\u{FF0F}", "\u{29F8}", "\u{FF3C}", "\u{29F5}", "\u{29F9}", "\u{1735}"]
    static let dotLookalikes: Set<Unicode.Scalar> = [".", "\u{2024}", "\u{FF0E}", "\u{3002}", "\u{FE52}", "\u{0701}", "\u{0702}", "\u{A60E}", "\u{10A50}", "\u{2025}", "\u{2026}"]

    static func refuse(_ text: String, _ rule: String) -> ManifestValueError {
        ManifestValueError(field: "value", value: quotedValue(text), rule: rule)
    }
}

/// One component of a relative path: a file or directory name a device creates. Not empty,
/// at most 255 UTF-8 bytes, not `.` or `..` (nor made only of dots or dot look-alikes), no
/// `/` or `\` (nor their look-alikes), no control, format or invisible characters, NFC.
public struct PathSegment: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(_ text: String) throws {
        guard !text.isEmpty else { throw ManifestText.refuse(text, "is empty (a file or directory name is needed)") }
        guard text.utf8.count <= 255 else { throw ManifestText.refuse(text, "is longer than 255 bytes (\(text.utf8.count))") }
        guard !text.unicodeScalars.allSatisfy({ ManifestText.dotLookalikes.contains($0) }) else {
            throw ManifestText.refuse(text, "is made only of dots (it would name a directory above)")
        }
        for scalar in text.unicodeScalars {
            if scalar == "/" || scalar == "\\" || ManifestText.slashLookalikes.contains(scalar) {
                throw ManifestText.refuse(text, "contains a path separator or a character that looks like one (U+\(String(scalar.value, radix: 16, uppercase: true)))")
            }
            if ManifestText.isHidden(scalar) {
                throw ManifestText.refuse(text, "contains a control or invisible character (U+\(String(scalar.value, radix: 16, uppercase: true)))")
            }
        }
        // Compared scalar by scalar: Swift's `==` is canonical equivalence, under which every
        // spelling equals its NFC form and the check could never fail. ASCII is its own NFC
        // form: Foundation's normalisation is skipped for it (a zip of many entries, a tree of
        // many files, checks a name each).
        guard text.utf8.allSatisfy({ $0 < 0x80 }) || text.unicodeScalars.elementsEqual(text.precomposedStringWithCanonicalMapping.unicodeScalars) else {
            throw ManifestText.refuse(text, "is not in Unicode normal form C (two spellings of one name)")
        }
        rawValue = text
    }

    /// A segment built from a value another type of this file already parsed under
    /// stricter rules (a digest, a model name): no second check, no force unwrap. A static
    /// function, not an initialiser, so `PathSegment.init` always names the checking one.
    fileprivate static func alreadyParsed(_ text: String) -> PathSegment { PathSegment(unchecked: text) }
    private init(unchecked text: String) { rawValue = text }

    public var description: String { rawValue }
}

/// A relative `/`-separated path: an object key under the target root, or a file's place in
/// a tree model. Each segment a `PathSegment`; not absolute, no empty segment, at most 1,024 bytes.
public struct RelativePath: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public let segments: [PathSegment]

    public init(_ text: String) throws {
        guard text.utf8.count <= 1024 else { throw ManifestText.refuse(text, "is longer than 1024 bytes (\(text.utf8.count))") }
        guard !text.hasPrefix("/") else { throw ManifestText.refuse(text, "is an absolute path (a relative one is needed)") }
        var segments: [PathSegment] = []
        for part in text.split(separator: "/", omittingEmptySubsequences: false) {
            do { segments.append(try PathSegment(String(part))) } catch let error as ManifestValueError {
                throw ManifestText.refuse(text, "has a segment \(error.value) that \(error.rule)")
            }
        }
        rawValue = text
        self.segments = segments
    }

    /// The path of one segment.
    public init(_ segment: PathSegment) {
        rawValue = segment.rawValue
        segments = [segment]
    }

    /// `base` with each segment appended: always inside `base`.
    public func appended(to base: URL) -> URL {
        segments.reduce(base) { $0.appendingPathComponent($1.rawValue) }
    }

    public var description: String { rawValue }
}

/// A SHA-256 digest as modelcast writes it: exactly 64 lowercase hexadecimal digits.
/// Uppercase is refused everywhere (publish never writes it), so one digest has one spelling.
public struct SHA256Hex: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(_ text: String) throws {
        guard text.utf8.count == 64, text.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
            let upper = text.utf8.count == 64 && text.utf8.allSatisfy({ (48...57).contains($0) || (65...70).contains($0) || (97...102).contains($0) })
            throw ManifestText.refuse(text, upper ? "is not lowercase hexadecimal (modelcast writes SHA-256 digests in lowercase)" : "is not a SHA-256 digest (64 lowercase hexadecimal digits)")
        }
        rawValue = text
    }

    /// A digest this module computed (64 lowercase hex digits by construction).
    init(computed text: String) { rawValue = text }

    /// The digest as a file name (it is one: 64 characters from [0-9a-f]).
    public var segment: PathSegment { .alreadyParsed(rawValue) }
    public var description: String { rawValue }
}

/// A model name: letters, digits, `.`, `_`, `-` (ASCII), at most 128 characters, not `.` or
/// `..`. It becomes a key segment, a URL segment and a directory on the device.
public struct ModelName: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(_ text: String) throws {
        guard !text.isEmpty, text.utf8.count <= 128, text != ".", text != "..",
              text.utf8.allSatisfy({ Self.allowed($0) }) else {
            throw ManifestText.refuse(text, "is not a model name (letters, digits, '.', '_' and '-', at most 128, not '.' or '..')")
        }
        rawValue = text
    }

    private static func allowed(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte) || byte == 46 || byte == 95 || byte == 45
    }

    public var segment: PathSegment { .alreadyParsed(rawValue) }
    public var description: String { rawValue }
    public static func < (a: ModelName, b: ModelName) -> Bool { a.rawValue < b.rawValue }
}

/// A model's version: a semantic version of at most 128 characters (so it is also a safe
/// directory name: semver allows only letters, digits, `.`, `-` and `+`).
public struct ModelVersion: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public let semantic: SemanticVersion

    public init(_ text: String) throws {
        guard text.utf8.count <= 128, let semantic = SemanticVersion(text) else {
            throw ManifestText.refuse(text, "is not a semantic version (MAJOR.MINOR.PATCH, e.g. 1.2.0; at most 128 characters)")
        }
        rawValue = text
        self.semantic = semantic
    }

    public var description: String { rawValue }
}

/// A channel name: `[a-z0-9][a-z0-9-]*`, at most 64 characters.
public struct ChannelName: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public static let stable = ChannelName(unchecked: "stable")

    private init(unchecked text: String) { rawValue = text }

    public init(_ text: String) throws {
        let bytes = Array(text.utf8)
        func lowerOrDigit(_ b: UInt8) -> Bool { (48...57).contains(b) || (97...122).contains(b) }
        guard let first = bytes.first, lowerOrDigit(first), bytes.count <= 64, bytes.allSatisfy({ lowerOrDigit($0) || $0 == 45 }) else {
            throw ManifestText.refuse(text, "is not a channel name (lowercase letters, digits and '-', starting with a letter or digit, at most 64 characters)")
        }
        rawValue = text
    }

    public var description: String { rawValue }
}

/// Where a device downloads a file: an absolute `http` or `https` URL with a host, no user
/// name or password, no spaces or control characters, at most 4,096 characters.
public struct DownloadURL: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public let url: URL

    public init(_ text: String) throws {
        guard text.utf8.count <= 4096 else { throw ManifestText.refuse(text, "is longer than 4096 characters") }
        guard text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
            throw ManifestText.refuse(text, "is not a URL: it has spaces, control or non-ASCII characters (percent-encode them)")
        }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased() else {
            throw ManifestText.refuse(text, "is not an absolute URL")
        }
        guard scheme == "http" || scheme == "https" else { throw ManifestText.refuse(text, "is not an http or https URL (scheme '\(scheme)')") }
        guard let host = url.host, !host.isEmpty else { throw ManifestText.refuse(text, "has no host") }
        guard url.user == nil, url.password == nil else { throw ManifestValueError(field: "value", value: "'\(scheme)://…@\(host)…'", rule: "carries a user name or password") }
        rawValue = text
        self.url = url
    }

    public var description: String { rawValue }
}

/// A byte count a manifest states: 0…2^53 (every such number is exact in JSON and in a
/// double; a sum of a few thousand never overflows 64 bits).
public struct ByteCount: Hashable, Sendable {
    public static let maximum: Int64 = 1 << 53
    public let value: Int64

    public init(_ value: Int64) throws {
        guard (0...Self.maximum).contains(value) else {
            throw ManifestValueError(field: "value", value: String(value), rule: "is not a size from 0 to 2^53 bytes")
        }
        self.value = value
    }
}

/// The app version a release needs, as apps write theirs: one to four numbers
/// (`5`, `5.2`, `1.4.0`, `1.0.0.123`), optionally a semver pre-release (`2.0.0-beta.1`).
/// Missing numbers count as 0 (`5.2` = `5.2.0`); a pre-release ranks below its release.
public struct AppVersion: Comparable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public let numbers: [UInt64]
    public let prerelease: [String]

    public init(_ text: String) throws {
        let refusal = ManifestText.refuse(text, "is not an app version (one to four numbers separated by dots, e.g. 5.2, 1.4.0 or 1.0.0.123)")
        guard text.utf8.count <= 64 else { throw refusal }
        var core = Substring(text)
        var pre: [String] = []
        if let plus = core.firstIndex(of: "+") { core = core[..<plus] }
        if let dash = core.firstIndex(of: "-") {
            pre = core[core.index(after: dash)...].split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            core = core[..<dash]
            guard pre.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) || $0 == 45 } }) else { throw refusal }
        }
        let parts = core.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...4).contains(parts.count) else { throw refusal }
        var numbers: [UInt64] = []
        for part in parts {
            guard !part.isEmpty, part.utf8.count <= 18, part.utf8.allSatisfy({ (48...57).contains($0) }), let value = UInt64(part) else { throw refusal }
            numbers.append(value)
        }
        rawValue = text
        self.numbers = numbers
        prerelease = pre
    }

    public var description: String { rawValue }

    public static func == (a: AppVersion, b: AppVersion) -> Bool { !(a < b) && !(b < a) }
    public func hash(into hasher: inout Hasher) {
        var trimmed = numbers
        while trimmed.last == 0 { trimmed.removeLast() }
        hasher.combine(trimmed)
        hasher.combine(prerelease)
    }

    public static func < (a: AppVersion, b: AppVersion) -> Bool {
        for index in 0..<max(a.numbers.count, b.numbers.count) {
            let x = index < a.numbers.count ? a.numbers[index] : 0
            let y = index < b.numbers.count ? b.numbers[index] : 0
            if x != y { return x < y }
        }
        switch (a.prerelease.isEmpty, b.prerelease.isEmpty) {
        case (true, _): return false
        case (false, true): return true
        case (false, false):
            // Semver's pre-release order: numeric identifiers numerically, below alphanumeric ones.
            for (x, y) in zip(a.prerelease, b.prerelease) where x != y {
                switch (UInt64(x), UInt64(y)) {
                case let (m?, n?): return m < n
                case (.some, nil): return true
                case (nil, .some): return false
                case (nil, nil): return Array(x.utf8).lexicographicallyPrecedes(Array(y.utf8))
                }
            }
            return a.prerelease.count < b.prerelease.count
        }
    }
}

/// A short printable ASCII text (a Content-Type, a profile name, a salt): no control
/// characters, at most `limit` bytes.
func checkPrintable(_ text: String, limit: Int, what: String) throws {
    guard !text.isEmpty, text.utf8.count <= limit, text.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
        throw ManifestText.refuse(text, "is not \(what) (printable ASCII, 1 to \(limit) characters)")
    }
}

/// Refuses JSON nested deeper than `limit` arrays and objects before it is decoded (a
/// decoder recursing into a deeply nested value runs out of stack).
public func checkJSONDepth(_ data: Data, limit: Int = ManifestLimits.maxDepth) throws {
    var depth = 0
    var inString = false
    var escaped = false
    for byte in data {
        if inString {
            if escaped { escaped = false } else if byte == 0x5C { escaped = true } else if byte == 0x22 { inString = false }
            continue
        }
        switch byte {
        case 0x22: inString = true
        case 0x5B, 0x7B:
            depth += 1
            if depth > limit {
                throw ManifestValueError(field: "(document)", value: "", rule: "nests arrays and objects deeper than \(limit) levels")
            }
        case 0x5D, 0x7D: depth -= 1
        default: break
        }
    }
}
