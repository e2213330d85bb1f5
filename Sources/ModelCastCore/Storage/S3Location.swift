import Foundation

/// Where an S3 target is, and how to reach it.
package struct S3Location: Sendable, Equatable, CustomStringConvertible {
    package let bucket: String
    /// Key prefix inside the bucket, without leading or trailing `/` ("" for the bucket root).
    package let prefix: String

    /// Parses `s3://bucket/prefix`.
    package init(_ url: String) throws {
        guard url.lowercased().hasPrefix("s3://") else {
            throw ModelCastError.usage("'\(url)' is not an s3://bucket/prefix URL")
        }
        let rest = url.dropFirst(5)
        let bucket = String(rest.prefix { $0 != "/" })
        // Bucket names: 3–63 of lowercase letters, digits, '.', '-' (S3 and R2 rules).
        let allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyz0123456789.-")
        guard (3...63).contains(bucket.count), bucket.unicodeScalars.allSatisfy({ allowed.contains($0) }),
              bucket.first != "-", bucket.first != ".", bucket.last != "-", bucket.last != "." else {
            throw ModelCastError.usage("'\(bucket)' in \(url) is not a valid bucket name (3-63 lowercase letters, digits, '.', '-')")
        }
        var prefix = String(rest.dropFirst(bucket.count))
        while prefix.hasPrefix("/") { prefix.removeFirst() }
        while prefix.hasSuffix("/") { prefix.removeLast() }
        if !prefix.isEmpty { try validateKey(prefix) }
        self.bucket = bucket
        self.prefix = prefix
    }

    /// The full object key for a target-relative key.
    package func objectKey(_ key: String) -> String { prefix.isEmpty ? key : prefix + "/" + key }

    package var description: String { "s3://\(bucket)\(prefix.isEmpty ? "" : "/" + prefix)" }
}

/// How to reach an S3-compatible service.
package struct S3Endpoint: Sendable, Equatable {
    /// `https://s3.us-east-1.amazonaws.com`, `https://ACCOUNT.r2.cloudflarestorage.com`, `http://127.0.0.1:9000`.
    package let url: String
    package let region: String
    /// Bucket in the path (`/bucket/key`) rather than the host name (`bucket.host`).
    package let pathStyle: Bool

    /// `endpoint` nil means AWS itself (virtual-host style); a custom endpoint defaults to path style.
    package init(endpoint: String?, region: String, pathStyle: Bool?) throws {
        if let endpoint {
            guard !URLParts.hasUserInfo(endpoint) else {
                throw ModelCastError.usage("endpoint \(redactingURLCredentials(endpoint)) carries a user name or password: S3 credentials come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE), never from the URL")
            }
            let lower = endpoint.lowercased()
            guard lower.hasPrefix("https://") || lower.hasPrefix("http://"), URLParts.path(of: endpoint).isEmpty,
                  !endpoint.contains("?"), endpoint.count > 8 else {
                throw ModelCastError.usage("endpoint '\(endpoint)' must be an http(s) URL with no path, e.g. https://ACCOUNT.r2.cloudflarestorage.com")
            }
            url = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
            self.pathStyle = pathStyle ?? true
        } else {
            url = "https://s3.\(region).amazonaws.com"
            self.pathStyle = pathStyle ?? false
        }
        guard !region.isEmpty, region.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
            throw ModelCastError.usage("region '\(region)' is not a region name (e.g. us-east-1, or auto for R2)")
        }
        self.region = region
    }

    /// Scheme and host[:port] of the endpoint.
    var scheme: String { String(url.prefix { $0 != ":" }) }
    var host: String { String(url.drop { $0 != ":" }.dropFirst(3)) }

    /// Host header and encoded path for an object (or the bucket when `key` is nil).
    func address(bucket: String, key: String?) -> (host: String, path: String) {
        let encodedKey = key.map { s3EncodedPath($0) } ?? ""
        if pathStyle {
            return (host, "/" + bucket + (key == nil ? "" : "/" + encodedKey))
        }
        return (bucket + "." + host, "/" + encodedKey)
    }
}

/// Credentials and region from the standard AWS environment: `AWS_ACCESS_KEY_ID`,
/// `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, or the shared credentials file
/// (`AWS_SHARED_CREDENTIALS_FILE`, default `~/.aws/credentials`) with `AWS_PROFILE`;
/// `AWS_REGION` / `AWS_DEFAULT_REGION` or the config file; `AWS_ENDPOINT_URL_S3` /
/// `AWS_ENDPOINT_URL`. Errors name the variables and files consulted, never a value.
package enum AWSEnvironment {
    package static func credentials(_ environment: [String: String]) throws -> AWSCredentials {
        if let id = environment["AWS_ACCESS_KEY_ID"], !id.isEmpty {
            guard let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty else {
                throw MissingCredentials("AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not")
            }
            let token = environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
            return AWSCredentials(accessKeyID: id, secretAccessKey: secret, sessionToken: token)
        }
        let profile = environment["AWS_PROFILE"] ?? "default"
        let path = environment["AWS_SHARED_CREDENTIALS_FILE"] ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.aws/credentials")
        if let text = try settingsFile(path) {
            let section = ini(text)[profile] ?? [:]
            if let id = section["aws_access_key_id"], let secret = section["aws_secret_access_key"] {
                return AWSCredentials(accessKeyID: id, secretAccessKey: secret, sessionToken: section["aws_session_token"])
            }
            throw MissingCredentials("no credentials for profile '\(profile)' in \(path) (need aws_access_key_id and aws_secret_access_key)")
        }
        throw MissingCredentials("no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE with \(path)")
    }

    /// The region: flag, then environment, then the config file, then us-east-1.
    package static func region(_ flag: String?, _ environment: [String: String]) throws -> String {
        if let flag { return flag }
        if let region = environment["AWS_REGION"] ?? environment["AWS_DEFAULT_REGION"], !region.isEmpty { return region }
        let profile = environment["AWS_PROFILE"] ?? "default"
        let path = environment["AWS_CONFIG_FILE"] ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.aws/config")
        if let text = try settingsFile(path) {
            let sections = ini(text)
            if let region = (sections[profile == "default" ? "default" : "profile \(profile)"] ?? sections[profile])?["region"] { return region }
        }
        return "us-east-1"
    }

    /// The endpoint: flag, then `AWS_ENDPOINT_URL_S3`, then `AWS_ENDPOINT_URL`. An empty
    /// variable counts as unset (CI systems set unset variables to "").
    package static func endpoint(_ flag: String?, _ environment: [String: String]) -> String? {
        flag ?? [environment["AWS_ENDPOINT_URL_S3"], environment["AWS_ENDPOINT_URL"]].compactMap { $0 }.first { !$0.isEmpty }
    }

    /// The text of the AWS settings file at `path`; nil when there is none (nothing there,
    /// or a path through something that is no directory). One that is there but cannot be
    /// read — a directory, no permission, not UTF-8 — is an error naming it: the settings
    /// in it would otherwise be replaced by defaults without a word. Never quotes the text.
    /// The largest AWS settings file read (a real one is a few KiB).
    static let settingsFileLimit = 1 << 20

    static func settingsFile(_ path: String) throws -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { return nil }
            throw ModelCastError.unreadable(path: path, reason: errnoDescription(code))
        }
        switch FileType(mode: info.st_mode) {
        case .regular: break
        case .directory: throw ModelCastError.unreadable(path: path, reason: "a directory, not a file")
        default: throw ModelCastError.unreadable(path: path, reason: "not a regular file")
        }
        let file = try FileDescriptor.openForReading(path)
        // One byte past the limit tells a file that is too large, without reading it all.
        let bytes = try file.read(at: 0, count: settingsFileLimit + 1)
        guard bytes.count <= settingsFileLimit else {
            throw ModelCastError.unreadable(path: path, reason: "larger than \(settingsFileLimit >> 20) MiB, the most modelcast reads of an AWS settings file")
        }
        guard let text = String(bytes: bytes, encoding: .utf8) else { throw ModelCastError.unreadable(path: path, reason: "not UTF-8 text") }
        return text
    }

    /// A minimal INI reader: `[section]` and `key = value` lines, `#`/`;` comments.
    static func ini(_ text: String) -> [String: [String: String]] {
        var sections: [String: [String: String]] = [:]
        var current = ""
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") && line.hasSuffix("]") {
                current = line.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
                continue
            }
            guard let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            sections[current, default: [:]][key] = value
        }
        return sections
    }
}

/// No usable credentials for an s3:// target. Like credentials the store refuses, an I/O
/// failure (status 3): what is missing is the environment's, not the command line's.
package struct MissingCredentials: Error, LocalizedError, CustomStringConvertible, Equatable, Sendable {
    package let message: String
    init(_ message: String) { self.message = message }
    package var errorDescription: String? { message }
    package var description: String { message }
}
