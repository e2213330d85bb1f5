/// The licence a model file declares about itself (GGUF `general.license`, Core ML's
/// metadata licence, an ONNX `license` metadata property). Written by whoever made the
/// file, so hostile: every part is held escaped for a terminal (`printable`) and cut to
/// `maxLength` characters, so no later code can print it raw or at length. Only
/// information: publish never takes it as the manifest's licence (accepting a licence for
/// devices is the release engineer's decision, `--licence`).
package struct DeclaredLicence: Sendable, Equatable, Encodable {
    /// The longest part kept, in characters after escaping; a longer one ends in `…`.
    package static let maxLength = 256

    /// What the file says its licence is (`apache-2.0`, `MIT`, a sentence…).
    package let text: String
    /// A longer name beside `text` (GGUF `general.license.name`), when the file has both.
    package let name: String?
    /// Where the licence is (GGUF `general.license.link`), as the file wrote it: not checked
    /// to be a URL, only escaped and cut.
    package let url: String?

    /// nil when the file names no licence (every part missing or empty).
    package init?(text: String?, name: String? = nil, url: String? = nil) {
        let parts = [text, name, url].map { $0.flatMap(Self.kept) }
        guard let first = parts[0] ?? parts[1] ?? parts[2] else { return nil }
        self.text = first
        // The name is shown beside the text only when it says something else.
        self.name = parts[0] != nil && parts[1] != parts[0] ? parts[1] : nil
        self.url = parts[2] != first ? parts[2] : nil
    }

    /// `text` escaped and cut, nil when it holds nothing but white space.
    static func kept(_ text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { return nil }
        var out = ""
        var count = 0
        // Escaped character by character, so a cut never splits an escape.
        for character in trimmed {
            let shown = printable(String(character))
            guard count + shown.count <= maxLength else { return out + "…" }
            out += shown
            count += shown.count
        }
        return out
    }

    /// One line for the terminal: `apache-2.0 (Apache License 2.0, https://…)`.
    package var line: String {
        let extra = [name, url].compactMap { $0 }
        return extra.isEmpty ? text : "\(text) (\(extra.joined(separator: ", ")))"
    }

    /// True when `spdx` names another licence than the file's text (compared without case:
    /// `apache-2.0` and `Apache-2.0` are the same SPDX id).
    package func differs(from spdx: String) -> Bool {
        text.lowercased() != spdx.lowercased()
    }

    enum CodingKeys: String, CodingKey { case text, name, url }
}
