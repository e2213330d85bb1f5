import Foundation

/// Small URL helpers that do not depend on Foundation's URL normalisation.
package enum URLParts {
    /// The URL an object of a target is served at: the base URL (a trailing `/` or not)
    /// and the key, each segment percent-encoded. Publish writes these URLs into the
    /// manifest; verify maps them back to keys (`keyOfURL`).
    package static func url(base: String, key: String) -> String {
        (base.hasSuffix("/") ? String(base.dropLast()) : base) + "/" + percentEncodedPath(key)
    }

    /// The path of an absolute URL without a trailing slash (`https://h/a/` → `/a`, `https://h` → ``).
    static func path(of url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return "" }
        let afterScheme = url[schemeEnd.upperBound...]
        guard let slash = afterScheme.firstIndex(of: "/") else { return "" }
        var path = String(afterScheme[slash...])
        if let query = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = String(path[..<query]) }
        while path.hasSuffix("/") { path.removeLast() }
        return path
    }

    /// Percent-encodes each segment of a `/`-separated key for use in a URL path.
    static func percentEncodedPath(_ key: String) -> String {
        // RFC 3986 unreserved characters and the sub-delimiters allowed in a path segment, ASCII only.
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@")
        return key.split(separator: "/", omittingEmptySubsequences: false)
            .map { String($0).addingPercentEncoding(withAllowedCharacters: allowed) ?? String($0) }
            .joined(separator: "/")
    }

    /// An absolute http(s) URL with a host and no query or fragment.
    /// True when the URL's authority has a `user[:password]@` part.
    static func hasUserInfo(_ url: String) -> Bool {
        guard let scheme = url.range(of: "://") else { return false }
        let authority = url[scheme.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        return authority.contains("@")
    }

    static func validateBaseURL(_ url: String) throws {
        // It is written into every manifest and into the hosting files (`_headers`,
        // nginx.conf, upload scripts), whose syntax a line feed or a space would break.
        guard url.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) }) else {
            throw ModelCastError.usage("base URL \(quotedValue(url)) contains a space, a control character or a non-ASCII character: percent-encode it (IDN hosts in punycode)")
        }
        let lower = url.lowercased()
        guard lower.hasPrefix("https://") || lower.hasPrefix("http://") else {
            throw ModelCastError.usage("base URL '\(url)' must start with https:// (or http:// for local testing)")
        }
        let rest = url.drop(while: { $0 != ":" }).dropFirst(3)
        let host = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !host.isEmpty, !host.contains("@"), !host.contains(" ") else {
            throw ModelCastError.usage("base URL '\(url)' has no valid host")
        }
        guard !url.contains("?"), !url.contains("#"), !url.contains(" ") else {
            throw ModelCastError.usage("base URL '\(url)' must not contain a query, fragment or space")
        }
        if let problem = syntaxProblem(url, authorityStart: url.distance(from: url.startIndex, to: rest.startIndex)) {
            throw ModelCastError.usage("base URL '\(url)' holds \(problem)")
        }
    }

    /// The first character of `url` (printable ASCII) that RFC 3986 does not allow there
    /// unencoded, or that a hosting file reads as syntax, described with its 1-based
    /// position and what to do; nil when there is none. The base URL is written unquoted
    /// into `_headers` and, quoted, into nginx.conf: only what a URL may hold can reach them.
    static func syntaxProblem(_ url: String, authorityStart: Int) -> String? {
        let bytes = Array(url.utf8)
        let pathStart = bytes[authorityStart...].firstIndex(of: UInt8(ascii: "/")) ?? bytes.count
        var index = authorityStart
        while index < bytes.count {
            let byte = bytes[index]
            let shown = Character(Unicode.Scalar(byte))
            let character = (byte == UInt8(ascii: "'") ? "\"'\"" : "'\(shown)'") + " at character \(index + 1)"
            let encoded = "%" + String(byte, radix: 16, uppercase: true)
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, isHexDigit(bytes[index + 1]), isHexDigit(bytes[index + 2]) else {
                    return "\(character), which does not start a percent-encoded byte (%HH): write it %25"
                }
                index += 3
                continue
            }
            let inPath = index >= pathStart
            // IP literals (`[::1]`) hold brackets in the authority; a path never does.
            let allowed = isUnreserved(byte) || subDelimiters.contains(byte) || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "@")
                || byte == UInt8(ascii: "/") || (!inPath && (byte == UInt8(ascii: "[") || byte == UInt8(ascii: "]")))
            guard allowed else {
                return "\(character), which no URL may hold unencoded (RFC 3986) and a hosting file could read as syntax: percent-encode it as \(encoded)"
            }
            // Cloudflare Pages and Netlify read `_headers` paths as patterns: `*` matches
            // anything, `:name` is a placeholder; the rules would cover other URLs.
            if inPath, byte == UInt8(ascii: "*") || byte == UInt8(ascii: ":") {
                return "\(character) in its path, which _headers (Cloudflare Pages, Netlify) reads as \(byte == UInt8(ascii: "*") ? "a wildcard" : "a placeholder"), so its rules would cover other URLs: percent-encode it as \(encoded)"
            }
            index += 1
        }
        return nil
    }

    /// RFC 3986 `sub-delims`: allowed in a path and a host as they are.
    private static let subDelimiters = Set("!$&'()*+,;=".utf8)

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || "-._~".utf8.contains(byte)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }
}
