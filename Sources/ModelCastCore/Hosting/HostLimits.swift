import Foundation

/// Limits static hosts document for what a directory target holds, and the warnings
/// publish gives when the directory crosses one (it still publishes: the directory is
/// right for other hosts, and for this one once the offending files are served elsewhere).
package enum HostLimits {
    /// A host whose limits publish checks when the user deploys there (`--hosted-on`).
    package enum Host: String, CaseIterable, Sendable {
        /// Cloudflare Pages: 25 MiB per file, 100 `_headers` rules of 2,000 characters a line.
        case pages
        /// R2 uploaded with wrangler (`_modelcast/upload-wrangler.sh`): 300 MiB per upload.
        case wrangler
    }

    /// developers.cloudflare.com/pages/platform/limits: "A `_headers` file can have a
    /// maximum of 100 header rules."
    package static let pagesHeaderRules = 100
    /// developers.cloudflare.com/pages/configuration/headers: "Each line in the `_headers`
    /// file has a 2,000 character limit."
    package static let pagesHeaderLineLength = 2_000
    /// developers.cloudflare.com/pages/platform/limits: "The maximum file size for a single
    /// Cloudflare Pages site asset is 25 MiB."
    package static let pagesFileSize: Int64 = 25 << 20
    /// developers.cloudflare.com/r2/objects/upload-objects: "Wrangler only supports uploading
    /// files up to 315MB in size" — wrangler's own check (workers-sdk
    /// packages/wrangler/src/r2/constants.ts) is `MAX_UPLOAD_SIZE = 300 * 1024 * 1024`.
    package static let wranglerUploadSize: Int64 = 300 << 20

    /// The rules of a `_headers` file: its lines that are neither indented (a header),
    /// a comment nor blank.
    package static func headerRuleCount(_ text: String) -> Int {
        text.split(separator: "\n").filter { line in
            guard let first = line.first else { return false }
            return first != "#" && first != " " && first != "\t"
        }.count
    }

    /// One warning per limit that `objects` (in upload order) and the rendered hosting
    /// `files` cross; none when nothing does. `ownRules`: the artifacts `_headers` gives a
    /// rule of their own (no pattern covers them).
    static func warnings(objects: [HostedObject], files: [(path: String, content: String)], ownRules: Int, hosts: Set<Host> = Set(Host.allCases)) -> [String] {
        var sizes = objects.map { (name: $0.key, size: $0.metadata.size) }
        sizes += files.filter { $0.path != "_headers" }.map { (name: $0.path, size: Int64($0.content.utf8.count)) }
        var warnings: [String] = []
        if hosts.contains(.pages), let headers = files.first(where: { $0.path == "_headers" })?.content {
            warnings += headerWarnings(headers, ownRules: ownRules)
        }
        let overPages = sizes.filter { $0.size > pagesFileSize }
        if hosts.contains(.pages), !overPages.isEmpty {
            warnings.append("\(describe(overPages)) over the 25 MiB Cloudflare Pages allows per file: serve \(overPages.count == 1 ? "it" : "them") from a bucket (R2, S3) rather than a Pages deployment")
        }
        let overWrangler = sizes.filter { $0.size > wranglerUploadSize }
        if hosts.contains(.wrangler), !overWrangler.isEmpty {
            warnings.append("\(describe(overWrangler)) over the 300 MiB wrangler uploads with one `wrangler r2 object put`: _modelcast/upload-wrangler.sh cannot upload \(overWrangler.count == 1 ? "it" : "them"); use _modelcast/upload-aws.sh or upload-rclone.sh against R2's S3 endpoint")
        }
        return warnings
    }

    /// The rule-count and line-length limits of Cloudflare Pages' `_headers`.
    static func headerWarnings(_ text: String, ownRules: Int) -> [String] {
        var warnings: [String] = []
        let rules = headerRuleCount(text)
        if rules > pagesHeaderRules {
            let why = ownRules == 0 ? "" : ": \(ownRules) artifacts have a rule of their own, as their file names share no pattern (that needs a plain extension, letters and digits after the last dot, which no object of another type has)"
            warnings.append("_headers has \(rules) header rules, more than the \(pagesHeaderRules) Cloudflare Pages allows\(why)")
        }
        let long = text.components(separatedBy: "\n").enumerated().filter { $0.element.count > pagesHeaderLineLength }
        if let first = long.first {
            let more = long.count > 1 ? " (and \(long.count - 1) more)" : ""
            warnings.append("_headers line \(first.offset + 1) has \(first.element.count) characters\(more), more than the \(pagesHeaderLineLength) Cloudflare Pages allows per line")
        }
        return warnings
    }

    /// `models/a.gguf (30.0 MiB) is`, or `5 files (a (30.0 MiB), b (…), c (…) and 2 more) are`.
    static func describe(_ files: [(name: String, size: Int64)]) -> String {
        let named = files.prefix(3).map { "\($0.name) (\(formatBytes($0.size)))" }
        if files.count == 1 { return named[0] + " is" }
        let more = files.count > 3 ? " and \(files.count - 3) more" : ""
        return "\(files.count) files (\(named.joined(separator: ", "))\(more)) are"
    }
}
