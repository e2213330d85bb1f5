import Foundation

/// A semantic version (semver.org 2.0.0): `MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]`.
/// Ordered by semver precedence (build metadata ignored).
public struct SemanticVersion: Comparable, Hashable, Sendable, CustomStringConvertible {
    public let major: UInt64
    public let minor: UInt64
    public let patch: UInt64
    /// Dot-separated pre-release identifiers (`rc.1` → ["rc", "1"]).
    public let prerelease: [String]
    /// Build metadata, kept for display but not for ordering.
    public let build: [String]
    /// The text as given.
    public let text: String

    /// Parses `text`; returns nil unless it is a valid semantic version.
    /// A leading `v` is not accepted: the manifest shows versions exactly as given.
    public init?(_ text: String) {
        self.text = text
        var rest = Substring(text)
        var buildPart: [String] = []
        if let plus = rest.firstIndex(of: "+") {
            buildPart = rest[rest.index(after: plus)...].split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            rest = rest[..<plus]
            guard !buildPart.isEmpty, buildPart.allSatisfy({ !$0.isEmpty && $0.allSatisfy(Self.isIdentifierCharacter) }) else { return nil }
        }
        var pre: [String] = []
        if let dash = rest.firstIndex(of: "-") {
            pre = rest[rest.index(after: dash)...].split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            rest = rest[..<dash]
            guard !pre.isEmpty else { return nil }
            for identifier in pre {
                guard !identifier.isEmpty, identifier.allSatisfy(Self.isIdentifierCharacter) else { return nil }
                if identifier.allSatisfy(\.isASCIIDigit), identifier.count > 1, identifier.hasPrefix("0") { return nil }
            }
        }
        let core = rest.split(separator: ".", omittingEmptySubsequences: false)
        guard core.count == 3 else { return nil }
        var numbers: [UInt64] = []
        for part in core {
            guard !part.isEmpty, part.allSatisfy(\.isASCIIDigit), !(part.count > 1 && part.hasPrefix("0")),
                  let value = UInt64(part) else { return nil }
            numbers.append(value)
        }
        major = numbers[0]
        minor = numbers[1]
        patch = numbers[2]
        prerelease = pre
        build = buildPart
    }

    private static func isIdentifierCharacter(_ c: Character) -> Bool {
        c.isASCII && (c.isLetter || c.isNumber || c == "-")
    }

    public var description: String { text }

    public static func == (a: SemanticVersion, b: SemanticVersion) -> Bool {
        a.major == b.major && a.minor == b.minor && a.patch == b.patch && a.prerelease == b.prerelease
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(major)
        hasher.combine(minor)
        hasher.combine(patch)
        hasher.combine(prerelease)
    }

    public static func < (a: SemanticVersion, b: SemanticVersion) -> Bool {
        if a.major != b.major { return a.major < b.major }
        if a.minor != b.minor { return a.minor < b.minor }
        if a.patch != b.patch { return a.patch < b.patch }
        // A version without pre-release identifiers ranks above one with them.
        switch (a.prerelease.isEmpty, b.prerelease.isEmpty) {
        case (true, true), (true, false): return false
        case (false, true): return true
        case (false, false): break
        }
        for (x, y) in zip(a.prerelease, b.prerelease) where x != y {
            let xNumeric = x.allSatisfy(\.isASCIIDigit), yNumeric = y.allSatisfy(\.isASCIIDigit)
            switch (xNumeric, yNumeric) {
            case (true, true):
                return x.count != y.count ? x.count < y.count : x < y
            case (true, false): return true
            case (false, true): return false
            case (false, false): return Array(x.utf8).lexicographicallyPrecedes(Array(y.utf8))
            }
        }
        return a.prerelease.count < b.prerelease.count
    }
}

extension Character {
    public var isASCIIDigit: Bool { isASCII && isNumber }
}
