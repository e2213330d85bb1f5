import Foundation

/// One `Content-Type` rule of `_headers`: a path, or a path pattern, and the type of
/// every object it matches.
struct ContentTypeRule: Equatable {
    let path: String
    let contentType: String
    /// A pattern shared by several artifacts, rather than one artifact's own path.
    let isPattern: Bool
}

/// The `Content-Type` rules `_headers` gives a target's artifacts. Artifacts of one kind of
/// name share a path pattern — `/models/*.gguf` for a plain extension (letters and digits
/// after the last dot), `/models/:model/blobs/*` for the files of tree models — so the
/// number of rules follows the kinds of name, not the number of objects (Cloudflare Pages
/// allows 100 rules). A pattern is used only where, read the way either host reads it, it
/// matches exactly its group's objects, all of one type, and no other object: two rules
/// setting Content-Type on one object would give it both values. Every artifact no
/// pattern covers gets a rule of its own, as all of them did before.
enum ContentTypeRules {
    static func make(objects: [HostedObject], basePath: String) -> [ContentTypeRule] {
        let artifacts = objects.filter { $0.role == .artifact }
        var groups: [String: [HostedObject]] = [:]
        for object in artifacts {
            if let pattern = sharedPattern(forKey: object.key, basePath: basePath) { groups[pattern, default: []].append(object) }
        }
        let served = objects.map { (key: $0.key, paths: servedPaths(of: $0.key, basePath: basePath)) }
        var rules: [ContentTypeRule] = []
        var covered = Set<String>()
        // A group of one saves no rule.
        for (text, members) in groups.sorted(by: { $0.key < $1.key }) where members.count > 1 {
            let types = Set(members.map(\.metadata.contentType))
            let keys = Set(members.map(\.key))
            guard types.count == 1, let pattern = HeaderPathPattern(text), pattern.matchesExactly(keys, among: served) else { continue }
            rules.append(ContentTypeRule(path: text, contentType: types.first!, isPattern: true))
            covered.formUnion(keys)
        }
        for object in artifacts where !covered.contains(object.key) {
            rules.append(ContentTypeRule(path: basePath + "/" + URLParts.percentEncodedPath(object.key), contentType: object.metadata.contentType, isPattern: false))
        }
        return rules
    }

    /// The pattern `key` would share with others of its kind, or nil for a name of its own.
    static func sharedPattern(forKey key: String, basePath: String) -> String? {
        let parts = key.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[0] == "models", let name = parts.last else { return nil }
        if parts.count == 4, parts[2] == "blobs" { return basePath + "/models/:model/blobs/*" }
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        let fileExtension = name[name.index(after: dot)...]
        guard (1...16).contains(fileExtension.count), fileExtension.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else { return nil }
        return basePath + "/models/*." + fileExtension
    }

    /// The request paths an object may be matched as: percent-encoded as its URL has it,
    /// and decoded (neither host documents which one its rules see).
    static func servedPaths(of key: String, basePath: String) -> [String] {
        let encoded = basePath + "/" + URLParts.percentEncodedPath(key)
        let decoded = basePath + "/" + key
        return encoded == decoded ? [encoded] : [encoded, decoded]
    }
}

/// A `_headers` path pattern read the way each host documents reading it:
/// - Cloudflare Pages (developers.cloudflare.com/pages/configuration/headers, "Match a
///   path"): "a splat pattern — signified by an asterisk (`*`) — will greedily match all
///   characters. You may only include a single splat in the URL"; a placeholder
///   `:[A-Za-z]\w*` matches all characters but `/`; the rest literally. Every matching
///   rule applies, and "if a header is applied twice … the values are joined with a comma".
/// - Netlify (the `_headers` format of docs.netlify.com/manage/routing/headers; how paths
///   match is its parser's, netlify/build packages/headers-parser `getForRegExp`, as the
///   page does not spell it out): the path is split at `/`; a `:name` segment
///   matches one segment, a lone `*` anything; a `*` inside a segment becomes `(.*)` and
///   the segment's other characters stay regular-expression syntax (the `.` of `*.gguf`
///   matches any character); a trailing `/` is optional; matching ignores case.
struct HeaderPathPattern {
    private let pages: NSRegularExpression
    private let netlify: NSRegularExpression

    /// nil for a pattern Pages refuses (more than one splat) or that does not compile: its
    /// artifacts then get a rule each (`ContentTypeRules.make`), so nothing is lost.
    init?(_ text: String) {
        guard text.filter({ $0 == "*" }).count <= 1,
              let pages = try? NSRegularExpression(pattern: Self.pagesExpression(text)),
              let netlify = try? NSRegularExpression(pattern: Self.netlifyExpression(text), options: .caseInsensitive) else { return nil }
        self.pages = pages
        self.netlify = netlify
    }

    static func pagesExpression(_ text: String) -> String {
        var expression = "^"
        var rest = Substring(text)
        while let first = rest.first {
            if first == "*" {
                expression += ".*"
                rest = rest.dropFirst()
            } else if first == ":", let next = rest.dropFirst().first, next.isASCII, next.isLetter {
                expression += "[^/]+"
                rest = rest.dropFirst(2).drop { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
            } else {
                expression += NSRegularExpression.escapedPattern(for: String(first))
                rest = rest.dropFirst()
            }
        }
        return expression + "$"
    }

    static func netlifyExpression(_ text: String) -> String {
        let expressions = text.split(separator: "/").map { part -> String in
            if part.hasPrefix(":") { return "([^/]+)" }
            if part == "*" { return "?(.*)" }
            if part.contains("*") { return part.replacingOccurrences(of: "*", with: "(.*)") }
            return NSRegularExpression.escapedPattern(for: String(part))
        }
        return "^/" + expressions.joined(separator: "/") + "/?$"
    }

    /// Whether every host applies the pattern to `path`, and whether any may.
    func match(_ path: String) -> (everywhere: Bool, somewhere: Bool) {
        let range = NSRange(path.startIndex..., in: path)
        let onPages = pages.firstMatch(in: path, range: range) != nil
        let onNetlify = netlify.firstMatch(in: path, range: range) != nil
        return (onPages && onNetlify, onPages || onNetlify)
    }

    /// True when, among `served` objects, the pattern may match only those in `keys`, and
    /// every host matches each of them by every path it may be asked for.
    func matchesExactly(_ keys: Set<String>, among served: [(key: String, paths: [String])]) -> Bool {
        served.allSatisfy { object in
            let results = object.paths.map(match)
            return keys.contains(object.key) ? results.allSatisfy(\.everywhere) : !results.contains(where: \.somewhere)
        }
    }
}
