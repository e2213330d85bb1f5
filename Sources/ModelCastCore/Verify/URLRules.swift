import Foundation

/// The rules every URL verify requests must pass: a URL the manifest names, and every
/// hop of a redirect, which is checked before it is requested (a redirect must not be
/// a way around them, e.g. to `http://169.254.169.254/`).
struct URLRules: Sendable {
    /// Prefixes (ending in "/") URLs must start with.
    let prefixes: [String]
    /// Accept http:// URLs.
    let allowHTTP: Bool
    /// Accept URLs outside the prefixes (with a warning).
    let allowExternalURLs: Bool

    /// What the rules say of one URL.
    enum Verdict: Equatable {
        case accepted
        /// Outside the prefixes, accepted by `--allow-external-urls` (a warning).
        case external(String)
        /// Refused: never requested.
        case refused(String)
    }

    /// Judges `url`: absolute http(s) with a host, https unless `allowHTTP`, under a
    /// prefix (or anywhere with `allowExternalURLs`), and no empty, '.' or '..' path
    /// segment below the prefix (none at all outside one).
    func verdict(_ url: String) -> Verdict {
        let lower = url.lowercased()
        let hasHost = lower.range(of: "://").map { !lower[$0.upperBound...].hasPrefix("/") && lower[$0.upperBound...].count > 0 } ?? false
        if !(lower.hasPrefix("https://") || lower.hasPrefix("http://")) || !hasHost {
            return .refused("not an absolute http(s) URL")
        }
        if lower.hasPrefix("http://") && !allowHTTP {
            return .refused("plain http (iOS App Transport Security refuses it; --allow-http for local tests)")
        }
        if let prefix = prefixes.first(where: { url.hasPrefix($0) }) {
            // `https://cdn/ml/../other/x` starts with the prefix but resolves outside it.
            if let problem = Self.pathProblem(below: prefix, in: url) {
                return .refused("\(problem): it may resolve outside \(prefix)")
            }
            return .accepted
        }
        if allowExternalURLs {
            if let problem = Self.pathProblem(below: nil, in: url) { return .refused(problem) }
            return .external("outside \(prefixes.joined(separator: ", "))")
        }
        return .refused("outside the expected prefix \(prefixes.joined(separator: ", ")) (--allow-external-urls to accept)")
    }

    /// Why a redirect from `from` to `to` must not be followed, or nil when it may:
    /// the target passes `verdict` (an external one only with `allowExternalURLs`),
    /// and https never leads to http.
    func hopProblem(from: String, to: String) -> String? {
        var reasons: [String] = []
        var rules = self
        if from.lowercased().hasPrefix("https://") && to.lowercased().hasPrefix("http://") {
            reasons.append("a redirect from https to plain http")
            rules = URLRules(prefixes: prefixes, allowHTTP: true, allowExternalURLs: allowExternalURLs)  // said once
        }
        if case .refused(let reason) = rules.verdict(to) { reasons.append(reason) }
        return reasons.isEmpty ? nil : reasons.joined(separator: "; ")
    }

    /// The absolute URL a Location header names, relative to `base`, without removing
    /// dot segments: a `..` in a redirect is seen (and refused) as it was sent.
    static func resolve(_ location: String, against base: String) -> String {
        let location = location.trimmingCharacters(in: .whitespaces)
        if location.range(of: "^[A-Za-z][A-Za-z0-9+.-]*:", options: .regularExpression) != nil { return location }
        let scheme = base.range(of: "://").map { String(base[..<$0.lowerBound]) } ?? "https"
        if location.hasPrefix("//") { return scheme + ":" + location }
        let origin = scheme + "://" + urlAuthority(base)
        if location.hasPrefix("/") { return origin + location }
        var path = base.dropFirst(origin.count)
        if let end = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<end] }
        if location.hasPrefix("?") { return origin + path + location }
        if location.hasPrefix("#") || location.isEmpty { return origin + path }
        let directory = path.lastIndex(of: "/").map { path[...$0] } ?? "/"
        return origin + directory + location
    }

    /// Why an object URL's path is not a plain key, or nil when it is. The path (below
    /// `prefix`, or all of it when `prefix` is nil; query and fragment dropped) is
    /// percent-decoded and must have no empty, `.` or `..` segment (`\` counts as `/`,
    /// as some servers treat it): such a path can resolve outside the prefix it starts with.
    static func pathProblem(below prefix: String?, in url: String) -> String? {
        var path: Substring
        if let prefix {
            path = url.dropFirst(prefix.count)
        } else {
            path = Substring(URLParts.path(of: url).drop(while: { $0 == "/" }))
        }
        if let end = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<end] }
        guard let decoded = String(path).removingPercentEncoding else {
            return "its path '\(path)' has an invalid percent-encoding"
        }
        let key = decoded.replacingOccurrences(of: "\\", with: "/")
        if prefix == nil {
            // Outside any prefix only dot segments matter (there is no key to keep clean).
            let segments = key.split(separator: "/")
            return segments.contains { $0 == "." || $0 == ".." } ? "its path '\(decoded)' has a '.' or '..' segment" : nil
        }
        do { try validateKey(key) } catch {
            return "its path below the prefix, '\(decoded)', is empty or has an empty, '.' or '..' segment"
        }
        return nil
    }
}

/// The authority (`host:port`, userinfo included) of an absolute URL: `https://h:1/a` → `h:1`.
func urlAuthority(_ url: String) -> String {
    guard let schemeEnd = url.range(of: "://") else { return url }
    let rest = url[schemeEnd.upperBound...]
    let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
    return String(rest[..<end])
}
