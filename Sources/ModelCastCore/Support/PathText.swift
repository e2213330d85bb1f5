import Foundation

/// The last component of a path and the path without it, as plain string operations.
///
/// Foundation's `NSString.lastPathComponent` and `deletingLastPathComponent` trap on
/// some one-character strings on Linux (`"d"`, `"."`, `"é"`, `"d/"`: an illegal
/// instruction inside `String._startOfLastPathComponent`), so no path a user types ever
/// goes through them. These follow NSString's rules otherwise: trailing slashes are
/// ignored, the root stays `/`, and a name without a slash has the parent `""`.
package enum PathText {
    /// `a/b/c` → `c`; `a/b/` → `b`; `/` → `/`; `""` → `""`.
    package static func lastComponent(_ path: String) -> String {
        let trimmed = trimmingTrailingSlashes(path)
        guard trimmed != "/" else { return "/" }
        guard let slash = trimmed.lastIndex(of: "/") else { return trimmed }
        return String(trimmed[trimmed.index(after: slash)...])
    }

    /// `a/b/c` → `a/b`; `c` → `""`; `/c` → `/`; `/` → `/`; `a//b` → `a`.
    package static func parent(_ path: String) -> String {
        let trimmed = trimmingTrailingSlashes(path)
        guard trimmed != "/" else { return "/" }
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        let head = trimmingTrailingSlashes(String(trimmed[..<slash]))
        return head.isEmpty ? "/" : head
    }

    /// The path without the slashes that end it (the root keeps its one).
    static func trimmingTrailingSlashes(_ path: String) -> String {
        var text = Substring(path)
        while text.count > 1, text.hasSuffix("/") { text = text.dropLast() }
        return String(text)
    }
}
