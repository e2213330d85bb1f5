import Foundation

/// A manifest field that takes a word from a fixed list, where a newer publisher may write
/// a word this version does not know (`network: satellite`): such a word is kept as
/// `unknown` and the model waits, rather than the manifest being refused or the condition
/// skipped. A word that is not printable ASCII of at most 32 characters is a bad value.
/// `LicenceAcceptance`, `NetworkRequirement` and `ChargingRequirement` are the fields.
public protocol OpenWord: Hashable, Sendable {
    /// The words this version knows, each with its value.
    static var known: KeyValuePairs<String, Self> { get }
    /// What a message calls the field, with its known words (`a network condition (any or unmetered)`).
    static var what: String { get }
    /// A word this version does not know.
    static func unknown(_ word: String) -> Self
    /// The unknown word, for a value that is one.
    var unknownWord: String? { get }
}

extension OpenWord {
    public init(parsing text: String) throws {
        if let value = Self.known.first(where: { $0.key == text })?.value {
            self = value
            return
        }
        try checkPrintable(text, limit: 32, what: Self.what)
        self = .unknown(text)
    }

    /// The manifest's word for it.
    public var rawValue: String {
        unknownWord ?? Self.known.first { $0.value == self }!.key  // every value but .unknown is in `known`
    }
}
