import Foundation

/// `text` as it may reach a terminal or a log: every control character but the line feed
/// and the tab (ESC, BEL, CR, DEL, the C1 controls), every format character (bidi
/// overrides, zero-width joiners) and the line and paragraph separators are written as a
/// JSON-style `\uXXXX` escape, so no value from a manifest, a model or a request can
/// clear a screen, set a window title or reorder what a person reads. JSON output is
/// unchanged in meaning: it never holds a raw control character, and the escape is
/// JSON's own inside a string.
package func terminalSafe(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: needsEscape) else { return text }
    var out = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
        guard needsEscape(scalar) else { out.append(scalar); continue }
        for unit in String(scalar).utf16 {
            out.append(contentsOf: ("\\u" + String(format: "%04x", unit)).unicodeScalars)
        }
    }
    return String(out)
}

private func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
    if scalar == "\n" || scalar == "\t" { return false }
    switch scalar.properties.generalCategory {
    case .control, .format, .lineSeparator, .paragraphSeparator: return true
    default: return false
    }
}

/// `text` with the user name and password of every URL in it replaced by `<redacted>`
/// (`https://<redacted>@host/…`): a credential given in a URL never reaches a terminal,
/// a log or a `--json` error object. A URL's authority is what follows `scheme://` up to
/// the next `/`, `?`, `#`, quote, backslash or white space; its part before the last `@` goes.
package func redactingURLCredentials(_ text: String) -> String {
    guard text.contains("@"), text.contains("://") else { return text }
    var out = ""
    var rest = Substring(text)
    while let marker = rest.range(of: "://") {
        out += rest[..<marker.upperBound]
        rest = rest[marker.upperBound...]
        let authority = rest.prefix { !"/?#'\"\\".contains($0) && !$0.isWhitespace }
        if let at = authority.lastIndex(of: "@"), at > authority.startIndex {
            out += "<redacted>"
            rest = rest[at...]
        }
    }
    return out + rest
}
