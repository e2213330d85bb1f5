import Foundation

/// The trusted comment every root signature of a key set carries:
/// `file:keys/N.json<TAB>keyset:N<TAB>expires:2027-11-29T00:00:00Z`. The comment is covered
/// by the signature's global signature, so a signature made for one version cannot be
/// moved to another (or to the same version re-issued with another expiry).
public enum KeySetComment {
    /// The comment a root key signs `keySet` with.
    public static func text(for keySet: KeySet) -> String {
        "file:\(keySet.path)\tkeyset:\(keySet.version)\texpires:\(keySet.expiresAtText)"
    }

    /// Why `comment` does not bind `keySet`, or nil when it does. The comment is
    /// tab-separated `name:value` fields: `file`, `keyset` and `expires` must each appear
    /// once with exactly the document's values; other fields (a signing time a later
    /// writer may add) are allowed; a field given twice makes the comment unreadable.
    public static func mismatch(_ comment: String, keySet: KeySet) -> String? {
        var fields: [Substring: Substring] = [:]
        for part in comment.split(separator: "\t", omittingEmptySubsequences: false) {
            guard let colon = part.firstIndex(of: ":") else {
                return "the trusted comment \(quotedValue(comment)) is not a key set signature's (tab-separated name:value fields)"
            }
            let name = part[..<colon]
            guard fields[name] == nil else { return "the trusted comment \(quotedValue(comment)) gives \(quotedValue(String(name))) twice" }
            fields[name] = part[part.index(after: colon)...]
        }
        let expected: [(Substring, String)] = [("file", keySet.path), ("keyset", String(keySet.version)), ("expires", keySet.expiresAtText)]
        for (name, value) in expected where fields[name].map(String.init) != value {
            let found = fields[name].map { quotedValue(String($0)) } ?? "nothing"
            return "the signature's trusted comment says \(name) \(found), the document \(quotedValue(value)) (a signature made for another key set)"
        }
        return nil
    }
}
