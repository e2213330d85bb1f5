import Foundation

/// The name of one file of a signed model, as model_signing writes it in
/// `predicate.resources[].name` and `serialization.ignore_paths`: a relative POSIX path
/// (`tokenizer/vocab.json`), or `.` for the one file of a single-file model. It cannot hold
/// an absolute path, an empty, `.` or `..` component, a control character, or more than
/// 4096 bytes, so a name read from a hostile bundle never leaves the model.
public struct ModelFilePath: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The name as written (`/`-separated).
    public let rawValue: String
    /// Its components; empty for `.`.
    public let components: [Substring]

    /// The name of a single-file model's one file.
    public static let wholeFile = ModelFilePath(checked: ".")
    /// The longest name accepted, in UTF-8 bytes.
    static let maximumBytes = 4096

    /// Accepts `text` if it is `.` or a normalised relative path; throws the rule it breaks
    /// (with the field "value": callers place it).
    public init(_ text: String) throws {
        func refuse(_ rule: String) -> ManifestValueError {
            ManifestValueError(field: "value", value: quotedValue(text), rule: rule)
        }
        guard !text.isEmpty else { throw refuse("is empty") }
        guard text.utf8.count <= Self.maximumBytes else { throw refuse("is longer than \(Self.maximumBytes) bytes") }
        guard !containsControlCharacter(text) else { throw refuse("contains a control character") }
        guard text != "." else { self = .wholeFile; return }
        guard !text.hasPrefix("/") else { throw refuse("is an absolute path (a model's files are named relative to it)") }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard !parts.contains(where: \.isEmpty) else { throw refuse("has an empty path component (a doubled or trailing /)") }
        guard !parts.contains(where: { $0 == "." || $0 == ".." }) else { throw refuse("has a . or .. component") }
        self.init(checked: text)
    }

    /// A name made by this program from a scanned tree (already valid).
    init(checked text: String) {
        rawValue = text
        components = text == "." ? [] : text.split(separator: "/", omittingEmptySubsequences: false)
    }

    /// True when this name is `other` or lies under it (`.git/HEAD` under `.git`): how
    /// model_signing applies `ignore_paths`.
    public func isWithin(_ other: ModelFilePath) -> Bool {
        !other.components.isEmpty && components.starts(with: other.components)
    }

    /// model_signing's order (Python's `sorted` over `PurePosixPath`): component by
    /// component, each compared by code point (the same as by UTF-8 bytes), so `a/b`
    /// sorts before `a-b` and `a.txt`.
    public static func < (lhs: ModelFilePath, rhs: ModelFilePath) -> Bool {
        lhs.components.lexicographicallyPrecedes(rhs.components) { a, b in
            a.utf8.lexicographicallyPrecedes(b.utf8)
        }
    }

    public var description: String { rawValue }
}
