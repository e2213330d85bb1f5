import Foundation

/// How a model on disk differs from the files a verified statement lists.
package struct ModelSignatureDifferences: Sendable, Equatable {
    /// A file whose content differs from what was signed.
    package struct Change: Sendable, Equatable {
        package let path: ModelFilePath
        package let signed: SHA256Digest
        package let actual: SHA256Digest
    }

    /// Files present in both whose SHA-256 differs, in model_signing's order.
    package let changed: [Change]
    /// Files the statement lists that the model does not have.
    package let missing: [ModelFilePath]
    /// Files the model has that the statement does not list.
    package let extra: [ModelFilePath]

    /// Compares what was signed with what is there.
    package init(signed: [ModelFilePath: SHA256Digest], actual: [ModelFilePath: SHA256Digest]) {
        changed = signed.keys.sorted().compactMap { path in
            guard let now = actual[path], let then = signed[path], now != then else { return nil }
            return Change(path: path, signed: then, actual: now)
        }
        missing = signed.keys.filter { actual[$0] == nil }.sorted()
        extra = actual.keys.filter { signed[$0] == nil }.sorted()
    }

    /// True when the model is exactly what was signed.
    package var isEmpty: Bool { changed.isEmpty && missing.isEmpty && extra.isEmpty }

    /// One line per difference, naming the file: "weights.bin changed (signed sha256 …,
    /// now …)", "missing tokenizer.json (signed, not in the model)", "extra notes.txt (in
    /// the model, not signed)".
    package var descriptions: [String] {
        changed.map { "\(quotedValue($0.path.rawValue, limit: 200)) changed (signed sha256 \($0.signed.hex), now \($0.actual.hex))" }
            + missing.map { "missing \(quotedValue($0.rawValue, limit: 200)) (signed, not in the model)" }
            + extra.map { "extra \(quotedValue($0.rawValue, limit: 200)) (in the model, not signed)" }
    }
}
