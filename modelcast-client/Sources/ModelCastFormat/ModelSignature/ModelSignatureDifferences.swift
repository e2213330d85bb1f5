import Foundation

/// How a model on disk differs from the files a verified statement lists.
public struct ModelSignatureDifferences: Sendable, Equatable {
    /// A file whose content differs from what was signed.
    public struct Change: Sendable, Equatable {
        public let path: ModelFilePath
        public let signed: SHA256Hex
        public let actual: SHA256Hex
    }

    /// Files present in both whose SHA-256 differs, in model_signing's order.
    public let changed: [Change]
    /// Files the statement lists that the model does not have.
    public let missing: [ModelFilePath]
    /// Files the model has that the statement does not list.
    public let extra: [ModelFilePath]

    /// Compares what was signed with what is there.
    public init(signed: [ModelFilePath: SHA256Hex], actual: [ModelFilePath: SHA256Hex]) {
        changed = signed.keys.sorted().compactMap { path in
            guard let now = actual[path], let then = signed[path], now != then else { return nil }
            return Change(path: path, signed: then, actual: now)
        }
        missing = signed.keys.filter { actual[$0] == nil }.sorted()
        extra = actual.keys.filter { signed[$0] == nil }.sorted()
    }

    /// True when the model is exactly what was signed.
    public var isEmpty: Bool { changed.isEmpty && missing.isEmpty && extra.isEmpty }

    /// One line per difference, naming the file: "weights.bin changed (signed sha256 …,
    /// now …)", "missing tokenizer.json (signed, not in the model)", "extra notes.txt (in
    /// the model, not signed)".
    public var descriptions: [String] {
        changed.map { "\(quotedValue($0.path.rawValue, limit: 200)) changed (signed sha256 \($0.signed.hex), now \($0.actual.hex))" }
            + missing.map { "missing \(quotedValue($0.rawValue, limit: 200)) (signed, not in the model)" }
            + extra.map { "extra \(quotedValue($0.rawValue, limit: 200)) (in the model, not signed)" }
    }
}
