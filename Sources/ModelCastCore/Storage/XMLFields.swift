import Foundation

/// Pulls element text out of S3's small XML documents (errors, listings, upload ids).
enum XMLFields {
    /// The text of every `<tag>…</tag>`, entities decoded.
    static func all(_ tag: String, in data: Data) -> [String] {
        let text = String(decoding: data, as: UTF8.self)
        var results: [String] = []
        var searchStart = text.startIndex
        let open = "<\(tag)>", close = "</\(tag)>"
        while let start = text.range(of: open, range: searchStart..<text.endIndex),
              let end = text.range(of: close, range: start.upperBound..<text.endIndex) {
            results.append(decodeEntities(String(text[start.upperBound..<end.lowerBound])))
            searchStart = end.upperBound
        }
        return results
    }

    static func first(_ tag: String, in data: Data) -> String? { all(tag, in: data).first }

    /// The text inside each `<tag>…</tag>` block, raw (for nested parsing).
    static func blocks(_ tag: String, in data: Data) -> [Data] {
        let text = String(decoding: data, as: UTF8.self)
        var results: [Data] = []
        var searchStart = text.startIndex
        while let start = text.range(of: "<\(tag)>", range: searchStart..<text.endIndex),
              let end = text.range(of: "</\(tag)>", range: start.upperBound..<text.endIndex) {
            results.append(Data(text[start.upperBound..<end.lowerBound].utf8))
            searchStart = end.upperBound
        }
        return results
    }

    static func decodeEntities(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var out = ""
        var index = text.startIndex
        while index < text.endIndex {
            if text[index] == "&", let semicolon = text[index...].firstIndex(of: ";") {
                let entity = String(text[text.index(after: index)..<semicolon])
                var replacement: String?
                switch entity {
                case "amp": replacement = "&"
                case "lt": replacement = "<"
                case "gt": replacement = ">"
                case "quot": replacement = "\""
                case "apos": replacement = "'"
                default:
                    if entity.hasPrefix("#x"), let code = UInt32(entity.dropFirst(2), radix: 16), let scalar = Unicode.Scalar(code) {
                        replacement = String(Character(scalar))
                    } else if entity.hasPrefix("#"), let code = UInt32(entity.dropFirst()), let scalar = Unicode.Scalar(code) {
                        replacement = String(Character(scalar))
                    }
                }
                if let replacement {
                    out += replacement
                    index = text.index(after: semicolon)
                    continue
                }
            }
            out.append(text[index])
            index = text.index(after: index)
        }
        return out
    }

    /// Escapes text for an XML element body.
    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}
