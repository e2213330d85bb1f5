import Foundation

/// AWS credentials: an access key id, its secret, and the session token of
/// temporary credentials. `description`, `debugDescription` and the mirror
/// (`dump`, debuggers) never show the secret or the session token, and show only
/// the access key id's first 4 characters followed by "…".
package struct AWSCredentials: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The access key id (`AKIA…`, or `ASIA…` for temporary credentials).
    package let accessKeyID: String
    /// The secret access key. Only ever used as HMAC key material; never printed.
    package let secretAccessKey: String
    /// The session token of temporary credentials, sent as `X-Amz-Security-Token`;
    /// nil (or empty) for long-term keys. Never printed.
    package let sessionToken: String?

    /// Wraps a key pair and, for temporary credentials, their session token.
    package init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    /// `AWSCredentials(accessKeyID: AKIA…, secretAccessKey: <redacted>[, sessionToken: <redacted>])`.
    package var description: String {
        var text = "AWSCredentials(accessKeyID: \(abbreviatedKeyID), secretAccessKey: <redacted>"
        if hasSessionToken { text += ", sessionToken: <redacted>" }
        return text + ")"
    }

    /// The same redacted text as `description`.
    package var debugDescription: String { description }

    /// A mirror with the same redactions, so `dump()` and debuggers cannot reveal the secret.
    package var customMirror: Mirror {
        Mirror(self, children: [
            "accessKeyID": abbreviatedKeyID,
            "secretAccessKey": "<redacted>",
            "sessionToken": hasSessionToken ? "<redacted>" : "none",
        ], displayStyle: .struct)
    }

    /// Whether requests carry `X-Amz-Security-Token` (an empty token counts as none).
    var hasSessionToken: Bool { !(sessionToken ?? "").isEmpty }

    /// The first 4 characters of the access key id and "…", the only form ever printed.
    var abbreviatedKeyID: String { String(accessKeyID.prefix(4)) + "…" }
}

/// A request to sign, as it will be sent on the wire.
package struct SigV4Request: Sendable {
    /// The HTTP method, e.g. `PUT`.
    package var method: String
    /// The Host header exactly as it will be sent: `examplebucket.s3.amazonaws.com`,
    /// or `127.0.0.1:9000` (the port is included when it is not the scheme's default).
    package var host: String
    /// The path exactly as sent, already percent-encoded (see `s3EncodedPath`),
    /// e.g. `/bucket/my%20key`.
    package var path: String
    /// Decoded query items (name, value), in any order; the signer encodes and sorts
    /// them. A parameter without a value (`?lifecycle`) is `("lifecycle", "")`.
    package var query: [(String, String)]
    /// The headers that will be sent and signed, in any order and case; a repeated
    /// name is signed as its values joined with "," in the order given. Host,
    /// Authorization and the headers `SigV4Signer.sign` returns are the signer's
    /// and must not be listed here.
    package var headers: [(String, String)]
    /// The lowercase hex SHA-256 of the body, or `UNSIGNED-PAYLOAD`.
    package var payloadSHA256: String

    /// A request with the given parts.
    package init(
        method: String, host: String, path: String, query: [(String, String)] = [],
        headers: [(String, String)] = [], payloadSHA256: String
    ) {
        self.method = method
        self.host = host
        self.path = path
        self.query = query
        self.headers = headers
        self.payloadSHA256 = payloadSHA256
    }
}

/// Signs requests with AWS Signature Version 4 (`AWS4-HMAC-SHA256`) in the
/// Authorization header.
///
/// For S3 (the default service) the canonical URI is the request path exactly as
/// sent: no normalisation, no second encoding. Other AWS services normalise the
/// path and encode each segment a second time; pass `normalizePath` and
/// `doubleEncodePath` for them.
package struct SigV4Signer: Sendable {
    /// The credentials requests are signed with.
    package let credentials: AWSCredentials
    /// The region in the credential scope (`us-east-1`; `auto` for Cloudflare R2).
    package let region: String
    /// The service in the credential scope (`s3`).
    package let service: String

    /// A signer for one region and service.
    package init(credentials: AWSCredentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// The headers to add to the request: Authorization, X-Amz-Date,
    /// X-Amz-Content-Sha256 (for service "s3"), and X-Amz-Security-Token when
    /// there is a session token. `headers` already in the request are signed too
    /// (Host is always signed).
    ///
    /// Throws `ModelCastError.usage` naming the offending value for a request that
    /// cannot be sent or signed as given (a header value with a line break, a path
    /// that is not percent-encoded, a header the signer sets itself, …), and
    /// `ModelCastError.crypto` when libcrypto fails.
    package func sign(_ request: SigV4Request, date: Date, normalizePath: Bool = false, doubleEncodePath: Bool = false) throws -> [(String, String)] {
        try validate(request, doubleEncodePath: doubleEncodePath)
        let canonical = canonicalForm(request, date: date, normalizePath: normalizePath, doubleEncodePath: doubleEncodePath)
        let signature = try sign(stringToSign(canonical), dateStamp: canonical.dateStamp)
        var added = [
            ("Authorization", "\(Self.algorithm) Credential=\(credentials.accessKeyID)/\(canonical.scope), SignedHeaders=\(canonical.signedHeaders), Signature=\(signature)"),
            ("X-Amz-Date", canonical.amzDate),
        ]
        if signsContentSHA256 { added.append(("X-Amz-Content-Sha256", request.payloadSHA256)) }
        if credentials.hasSessionToken, let token = credentials.sessionToken { added.append(("X-Amz-Security-Token", token)) }
        return added
    }

    /// The canonical request `sign` would hash, for tests and debugging. It never
    /// includes the secret key; it does include the session token, which is a signed
    /// header. Headers the signer sets itself are taken from the signer, not the request.
    package func canonicalRequest(_ request: SigV4Request, date: Date, normalizePath: Bool = false, doubleEncodePath: Bool = false) -> String {
        canonicalForm(request, date: date, normalizePath: normalizePath, doubleEncodePath: doubleEncodePath).request
    }

    /// The string to sign `sign` would compute, for tests and debugging (never
    /// includes the secret).
    package func stringToSign(_ request: SigV4Request, date: Date, normalizePath: Bool = false, doubleEncodePath: Bool = false) -> String {
        stringToSign(canonicalForm(request, date: date, normalizePath: normalizePath, doubleEncodePath: doubleEncodePath))
    }

    // MARK: - Canonical form

    static let algorithm = "AWS4-HMAC-SHA256"

    /// S3 wants the payload hash as a header too; other services sign the body
    /// hash only inside the canonical request.
    private var signsContentSHA256: Bool { service == "s3" }

    /// Lower-case names of the headers the signer owns: they come from the signer
    /// (or from `request.host`), never from `request.headers`.
    private var signerHeaders: Set<String> {
        var names: Set<String> = ["authorization", "host", "x-amz-date"]
        if signsContentSHA256 { names.insert("x-amz-content-sha256") }
        if credentials.hasSessionToken { names.insert("x-amz-security-token") }
        return names
    }

    private struct CanonicalForm {
        let request: String
        let signedHeaders: String
        let amzDate: String
        let dateStamp: String
        let scope: String
    }

    private func canonicalForm(_ request: SigV4Request, date: Date, normalizePath: Bool, doubleEncodePath: Bool) -> CanonicalForm {
        let amzDate = Self.amzDate(date)
        let dateStamp = String(amzDate.prefix(8))

        var values: [String: [String]] = [:]
        func add(_ name: String, _ value: String) { values[name, default: []].append(trimAll(value)) }
        add("host", request.host)
        let owned = signerHeaders
        for (name, value) in request.headers {
            let lower = asciiLowercased(trimAll(name))
            if !owned.contains(lower) { add(lower, value) }
        }
        add("x-amz-date", amzDate)
        if signsContentSHA256 { add("x-amz-content-sha256", request.payloadSHA256) }
        if credentials.hasSessionToken, let token = credentials.sessionToken { add("x-amz-security-token", token) }
        let names = values.keys.sorted(by: bytewiseLess)
        let headerLines = names.map { $0 + ":" + values[$0]!.joined(separator: ",") + "\n" }.joined()
        let signedHeaders = names.joined(separator: ";")

        let canonical = [
            request.method,
            Self.canonicalURI(request.path, normalize: normalizePath, doubleEncode: doubleEncodePath),
            Self.canonicalQuery(request.query),
            headerLines,
            signedHeaders,
            request.payloadSHA256,
        ].joined(separator: "\n")
        return CanonicalForm(
            request: canonical, signedHeaders: signedHeaders, amzDate: amzDate, dateStamp: dateStamp,
            scope: "\(dateStamp)/\(region)/\(service)/aws4_request")
    }

    private func stringToSign(_ canonical: CanonicalForm) -> String {
        [Self.algorithm, canonical.amzDate, canonical.scope, sha256Hex(canonical.request)].joined(separator: "\n")
    }

    /// HMAC chain "AWS4"+secret → date → region → service → "aws4_request", then
    /// the signature over the string to sign, as lowercase hex.
    private func sign(_ stringToSign: String, dateStamp: String) throws -> String {
        let hmac = try HMACSHA256Context()
        var key = try hmac.authenticate(key: Array(("AWS4" + credentials.secretAccessKey).utf8), message: Array(dateStamp.utf8))
        for part in [region, service, "aws4_request"] {
            key = try hmac.authenticate(key: key, message: Array(part.utf8))
        }
        return hexString(try hmac.authenticate(key: key, message: Array(stringToSign.utf8)))
    }

    /// The path as sent, or (for services other than S3) with "." and ".."
    /// segments resolved and empty segments dropped, then each segment encoded again.
    static func canonicalURI(_ path: String, normalize: Bool, doubleEncode: Bool) -> String {
        var uri = path.isEmpty ? "/" : path
        if normalize { uri = normalizedPath(uri) }
        if doubleEncode {
            uri = uri.split(separator: "/", omittingEmptySubsequences: false)
                .map { uriEncode(Substring($0), keepSlash: false) }
                .joined(separator: "/")
        }
        return uri
    }

    /// RFC 3986 dot-segment removal plus collapsing of empty segments ("//"); a
    /// trailing slash (or a trailing "." or "..") is kept as a trailing slash.
    static func normalizedPath(_ path: String) -> String {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        var kept: [Substring] = []
        for segment in segments {
            switch segment {
            case ".": continue
            case "..": _ = kept.popLast()
            default: kept.append(segment)
            }
        }
        var result = "/" + kept.joined(separator: "/")
        let endsAsDirectory = path.hasSuffix("/") || segments.last == "." || segments.last == ".."
        if !kept.isEmpty && endsAsDirectory { result += "/" }
        return result
    }

    /// Each name and value encoded (unreserved characters kept, space as %20, "="
    /// and "/" encoded), sorted by encoded name then value, joined with "&".
    static func canonicalQuery(_ items: [(String, String)]) -> String {
        items.map { (uriEncode(Substring($0.0), keepSlash: false), uriEncode(Substring($0.1), keepSlash: false)) }
            .sorted { $0.0 == $1.0 ? bytewiseLess($0.1, $1.1) : bytewiseLess($0.0, $1.0) }
            .map { $0.0 + "=" + $0.1 }
            .joined(separator: "&")
    }

    /// `yyyyMMdd'T'HHmmss'Z'` in UTC, whole seconds.
    static func amzDate(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return pad(parts.tm_year + 1900, 4) + pad(parts.tm_mon + 1, 2) + pad(parts.tm_mday, 2) + "T"
            + pad(parts.tm_hour, 2) + pad(parts.tm_min, 2) + pad(parts.tm_sec, 2) + "Z"
    }

    // MARK: - Validation

    /// Refuses what would produce a request the server cannot check, or a canonical
    /// request an attacker-controlled value could rewrite (a line break in a header).
    private func validate(_ request: SigV4Request, doubleEncodePath: Bool) throws {
        func refuse(_ message: String) -> ModelCastError { .usage("cannot sign request: " + message) }

        guard !credentials.accessKeyID.isEmpty, credentials.accessKeyID.utf8.allSatisfy({ isVisibleASCII($0) && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: ",") }) else {
            throw refuse("the access key id '\(credentials.abbreviatedKeyID)' is empty or contains a space, '/' or ','")
        }
        guard !credentials.secretAccessKey.isEmpty else { throw refuse("the secret access key is empty") }
        if let token = credentials.sessionToken, token.utf8.contains(where: isControl) {
            throw refuse("the session token contains a control character")
        }
        for (label, value) in [("region", region), ("service", service)] {
            guard !value.isEmpty, value.utf8.allSatisfy({ isVisibleASCII($0) && $0 != UInt8(ascii: "/") }) else {
                throw refuse("\(label) '\(value)' is empty or contains a space, a control character or '/'")
            }
        }
        guard !request.method.isEmpty, request.method.utf8.allSatisfy(isTokenCharacter) else {
            throw refuse("method '\(request.method)' is not an HTTP method token")
        }
        guard !request.host.isEmpty, request.host.utf8.allSatisfy(isHostCharacter) else {
            throw refuse("host '\(request.host)' is not a host[:port]")
        }
        guard request.path.hasPrefix("/"), !request.path.utf8.contains(where: isControl) else {
            throw refuse("path '\(request.path)' does not start with '/' or contains a control character")
        }
        // S3 signs the path exactly as sent, so it must already be what goes on the
        // wire; a raw space or non-ASCII byte means the key was never encoded.
        if !doubleEncodePath, !isPercentEncodedPath(request.path) {
            throw refuse("path '\(request.path)' is not percent-encoded (encode object keys with s3EncodedPath)")
        }
        let owned = signerHeaders
        for (name, value) in request.headers {
            guard !name.isEmpty, name.utf8.allSatisfy(isTokenCharacter) else {
                throw refuse("header name '\(name)' is not an HTTP token")
            }
            guard !owned.contains(asciiLowercased(name)) else {
                throw refuse("header '\(name)' is set by the signer (Host comes from the request's host); remove it from the request's headers")
            }
            guard !value.utf8.contains(where: { isControl($0) && $0 != UInt8(ascii: "\t") }) else {
                throw refuse("the value of header '\(name)' contains a line break or control character")
            }
        }
        let payload = request.payloadSHA256
        let isHexDigest = payload.utf8.count == 64 && payload.utf8.allSatisfy { isDigit($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
        guard isHexDigest || payload == "UNSIGNED-PAYLOAD" else {
            throw refuse("payload hash '\(payload)' is neither 64 lowercase hex digits nor UNSIGNED-PAYLOAD")
        }
    }
}

/// Percent-encodes an S3 object key for a request path: every byte except the
/// unreserved characters (A-Z a-z 0-9 - . _ ~) and "/" becomes %XX (uppercase
/// hex) of its UTF-8 encoding. "//", spaces (%20) and "+" (%2B) are kept as their
/// encodings and "." and ".." segments are left alone: S3 keys are not paths, so
/// nothing is normalised. The result has no leading "/" of its own.
package func s3EncodedPath(_ key: String) -> String {
    uriEncode(Substring(key), keepSlash: true)
}

// MARK: - Byte-level helpers

/// SigV4's UriEncode: unreserved bytes kept, "/" kept only when asked, every
/// other byte of the UTF-8 encoding as %XX with uppercase hex.
func uriEncode(_ text: Substring, keepSlash: Bool) -> String {
    let hex = Array("0123456789ABCDEF".utf8)
    var out = [UInt8]()
    out.reserveCapacity(text.utf8.count)
    for byte in text.utf8 {
        if isUnreserved(byte) || (keepSlash && byte == UInt8(ascii: "/")) {
            out.append(byte)
        } else {
            out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0f)]]
        }
    }
    return String(decoding: out, as: UTF8.self)
}

/// Whether every byte of `path` may appear in a request path as sent: RFC 3986
/// pchar (unreserved, sub-delims, ":" and "@"), "/", and "%" followed by two hex digits.
private func isPercentEncodedPath(_ path: String) -> Bool {
    let bytes = Array(path.utf8)
    var index = 0
    while index < bytes.count {
        let byte = bytes[index]
        if byte == UInt8(ascii: "%") {
            guard index + 2 < bytes.count, isHexDigit(bytes[index + 1]), isHexDigit(bytes[index + 2]) else { return false }
            index += 3
            continue
        }
        guard isUnreserved(byte) || "/:@!$&'()*+,;=".utf8.contains(byte) else { return false }
        index += 1
    }
    return true
}

/// Trims spaces and tabs at both ends and collapses each inner run to one space
/// (SigV4's "Trimall" for header values).
private func trimAll(_ value: String) -> String {
    var out = [UInt8]()
    var pendingSpace = false
    for byte in value.utf8 {
        if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") {
            pendingSpace = !out.isEmpty
        } else {
            if pendingSpace { out.append(UInt8(ascii: " ")) }
            pendingSpace = false
            out.append(byte)
        }
    }
    return String(decoding: out, as: UTF8.self)
}

/// ASCII-only lower-casing: header names are tokens, and locale rules must not
/// change the bytes that are signed.
private func asciiLowercased(_ text: String) -> String {
    String(decoding: text.utf8.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 + 32 : $0 }, as: UTF8.self)
}

/// Byte order of the UTF-8 encodings, which is what SigV4's sorts mean.
private func bytewiseLess(_ a: String, _ b: String) -> Bool {
    a.utf8.lexicographicallyPrecedes(b.utf8)
}

private func sha256Hex(_ text: String) -> String {
    do {
        return try SHA256Hasher.digest(Array(text.utf8)).hex
    } catch {
        // libcrypto's SHA-256 only fails when it cannot allocate a digest context;
        // the Swift runtime traps on allocation failure as well.
        preconditionFailure("SHA-256 of the canonical request failed: \(error)")
    }
}

private func hexString(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out = [UInt8]()
    out.reserveCapacity(bytes.count * 2)
    for byte in bytes {
        out.append(digits[Int(byte >> 4)])
        out.append(digits[Int(byte & 0x0f)])
    }
    return String(decoding: out, as: UTF8.self)
}

private func isUnreserved(_ byte: UInt8) -> Bool {
    isDigit(byte) || isLetter(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "~")
}

private func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

private func isLetter(_ byte: UInt8) -> Bool {
    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
}

private func isHexDigit(_ byte: UInt8) -> Bool {
    isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
}

private func isControl(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x7f }

/// Printable ASCII other than space.
private func isVisibleASCII(_ byte: UInt8) -> Bool { byte > 0x20 && byte < 0x7f }

/// RFC 9110 tchar.
private func isTokenCharacter(_ byte: UInt8) -> Bool {
    isDigit(byte) || isLetter(byte) || "!#$%&'*+-.^_`|~".utf8.contains(byte)
}

/// A registered name or IPv4 address, an IPv6 literal in brackets, and a port.
private func isHostCharacter(_ byte: UInt8) -> Bool {
    isDigit(byte) || isLetter(byte) || "-._~:[]".utf8.contains(byte)
}
