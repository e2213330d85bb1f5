import Foundation

/// What a SOURCE argument names (verify, report, rollout simulate, serve's release page),
/// told apart once: a manifest URL, an s3:// target, a published directory or a manifest
/// file. A value that can be none of them is refused here, named — control characters
/// escaped, a password in a URL never shown — so no command decides it again.
package enum ReadSource: Sendable, Equatable {
    /// `https://…` or `http://…`, with a host and no credentials: read as a device reads it.
    case manifestURL(String)
    /// `s3://bucket/prefix`: read through the store's API.
    case bucket(String)
    /// A directory that exists: a published target.
    case directory(String)
    /// A file that exists: a manifest.
    case manifestFile(String)

    /// Parses SOURCE as given: its scheme (decided by `TargetKind`), else what exists at the path.
    package init(_ text: String) throws {
        guard !text.isEmpty else {
            throw ModelCastError.usage("SOURCE is empty: give a manifest URL, a published directory, s3://BUCKET/PREFIX or a manifest file (is a variable unset?)")
        }
        if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw ModelCastError.usage("SOURCE \(quotedValue(redactingURLCredentials(text))) holds a control character: no URL or path modelcast reads has one (a stray line feed or escape in a variable?)")
        }
        switch TargetKind(of: text) {
        case .bucket:
            _ = try S3Location(text)
            self = .bucket(text)
        case .served:
            try Self.checkURL(text)
            self = .manifestURL(text)
        case .local:
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: text, isDirectory: &isDirectory) {
                self = isDirectory.boolValue ? .directory(text) : .manifestFile(text)
                return
            }
            try Self.checkScheme(text)
            throw ModelCastError.notFound(path: text)
        }
    }

    /// SOURCE as given.
    package var text: String {
        switch self {
        case .manifestURL(let text), .bucket(let text), .directory(let text), .manifestFile(let text): return text
        }
    }

    /// A manifest URL must name a host, and carry no user name or password: devices send
    /// none, so what they get is read without. Shown redacted.
    private static func checkURL(_ url: String) throws {
        if URLParts.hasUserInfo(url) {
            throw ModelCastError.usage("the manifest URL \(quotedValue(redactingURLCredentials(url))) carries a user name or password: devices send none, so it is read without; give it without USER:PASSWORD@")
        }
        let authority = url[url.range(of: "://")!.upperBound...].prefix { !"/?#".contains($0) }
        guard !authority.isEmpty, !authority.hasPrefix(":") else {
            throw ModelCastError.usage("\(quotedValue(url)) is not a manifest URL: give http(s)://HOST/…/manifest.json")
        }
    }

    /// A path that does not exist but starts like a URL with another scheme (`gs://…`,
    /// `ftp:…`) is a mistyped URL, not a missing file: named, with the likely meaning.
    private static func checkScheme(_ text: String) throws {
        guard let colon = text.firstIndex(of: ":") else { return }
        let scheme = text[..<colon]
        guard let first = scheme.first, first.isASCII, first.isLetter,
              scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+.-".contains($0)) }) else { return }
        let rest = text[text.index(after: colon)...].drop { $0 == "/" }
        let lower = scheme.lowercased()
        if ["http", "https", "s3"].contains(lower) {
            throw ModelCastError.usage(redactingURLCredentials("SOURCE \(quotedValue(text)) is no path that exists, and no URL ('\(scheme):' is followed by '//'): did you mean \(lower)://\(rest)?"))
        }
        // Most likely a bucket URL of another tool (gs://, r2://).
        throw ModelCastError.usage(redactingURLCredentials("SOURCE \(quotedValue(text)) has the scheme '\(scheme):', which modelcast does not read: give a manifest URL (https://), s3://BUCKET/PREFIX (AWS S3, R2 and other S3-compatible stores) or a path: did you mean s3://\(rest)? (a path whose name has a ':' can be given as ./\(text))"))
    }
}
