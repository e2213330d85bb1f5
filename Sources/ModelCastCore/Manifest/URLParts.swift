import Foundation

/// Small URL helpers that do not depend on Foundation's URL normalisation.
enum URLParts {
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
    }
}
