import Foundation

/// What a target or source string the user gave names. The one place that decides it:
/// no other code looks at a target string's scheme.
package enum TargetKind: Sendable, Equatable {
    /// `s3://bucket/prefix`: an S3-compatible store, reached through its API.
    case bucket
    /// `https://…` or `http://…`: something served (a manifest URL), read as a device reads it.
    case served
    /// Anything else: a local path (a published directory, a manifest file).
    case local

    package init(of text: String) {
        let lower = text.lowercased()
        if lower.hasPrefix("s3://") { self = .bucket }
        else if lower.hasPrefix("https://") || lower.hasPrefix("http://") { self = .served }
        else { self = .local }
    }
}

/// How to reach a publish target, as the user gave it.
package struct TargetSettings: Sendable {
    /// A directory path or `s3://bucket/prefix`.
    package var target: String
    package var endpoint: String?
    package var region: String?
    /// nil: path style for custom endpoints, virtual-host style for AWS (path style
    /// for a bucket whose name contains '.', which AWS's wildcard certificate cannot cover).
    package var pathStyle: Bool?
    package var policy = S3UploadPolicy()
    /// `--checksum`: nil takes `$MODELCAST_S3_CHECKSUM`, else `crc64nvme`.
    package var checksum: S3ChecksumMode?
    package var retries = 4
    /// Reports each object upload to an S3 target (`uploading KEY`, its size) as its
    /// bytes go out; nil reports nothing.
    package var progress: ProgressFactory?

    package init(target: String) { self.target = target }

    /// True for `s3://` targets.
    package var isS3: Bool { TargetKind(of: target) == .bucket }

    /// Opens the target: a `DirectoryStorage` or an `S3Storage` with credentials from
    /// the environment. Options that only apply to S3 are refused for a directory.
    /// `log` receives notes for the user (a directory waiting for another publish's lock).
    package func open(environment: [String: String], log: @escaping @Sendable (String) -> Void = { _ in }) throws -> any Storage {
        if isS3 {
            let location = try S3Location(target)
            let endpoint = try s3Endpoint(for: location, environment: environment)
            let credentials = try AWSEnvironment.credentials(environment)
            var policy = self.policy
            policy.checksum = try checksumMode(environment)
            return try S3Storage(target: location, endpoint: endpoint, credentials: credentials, policy: policy, retries: retries,
                                 progress: progress, log: log)
        }
        if endpoint != nil || region != nil || pathStyle != nil || checksum != nil {
            throw ModelCastError.usage("--endpoint, --region, --path-style and --checksum apply to s3:// targets, not the directory \(target)")
        }
        try Self.checkDirectoryTarget(target)
        return DirectoryStorage(root: target, log: log)
    }
}

extension TargetSettings {
    /// A directory target as typed must not be a mistyped bucket: anything that looks like
    /// a URL scheme but is not `s3://` is refused, and so is a directory whose parent does
    /// not exist (as `cp` refuses), each naming the value and the likely meaning. A
    /// pipeline whose `--to "$MODEL_BUCKET"` went wrong fails instead of publishing into
    /// a local folder nobody serves.
    static func checkDirectoryTarget(_ target: String) throws {
        guard !target.isEmpty else {
            throw ModelCastError.usage("the target is empty: give a directory (site) or s3://BUCKET/PREFIX (is a variable unset?)")
        }
        if let colon = target.firstIndex(of: ":") {
            let scheme = target[..<colon]
            if let first = scheme.first, first.isASCII, first.isLetter,
               scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+.-".contains($0)) }) {
                let rest = target[target.index(after: colon)...].drop { $0 == "/" }
                throw ModelCastError.usage("the target \(quotedValue(target)) looks like a URL (scheme '\(scheme):'), but only s3://BUCKET/PREFIX targets are URLs (AWS S3, R2 and other S3-compatible stores): did you mean s3://\(rest)? (a directory whose name has a ':' can be given as ./\(target))")
            }
        }
        // A parent that exists but is no directory is left to the write, an I/O failure.
        let parent = PathText.parent(target)
        guard parent.isEmpty || FileManager.default.fileExists(atPath: parent) else {
            let components = target.split(separator: "/", omittingEmptySubsequences: true)
            let hint: String
            if let first = components.first, first.lowercased() == "s3", components.count > 1 {
                hint = "did you mean s3://\(components.dropFirst().joined(separator: "/"))?"
            } else {
                hint = "for a bucket, write s3://\(target.hasPrefix("/") ? String(target.dropFirst()) : target); for a directory, create \(quotedValue(parent)) first"
            }
            throw ModelCastError.usage("the target \(quotedValue(target)) is a directory whose parent \(quotedValue(parent)) does not exist: \(hint)")
        }
    }

    /// `--checksum`, else `$MODELCAST_S3_CHECKSUM`, else `crc64nvme`.
    func checksumMode(_ environment: [String: String]) throws -> S3ChecksumMode {
        if let checksum { return checksum }
        guard let text = environment["MODELCAST_S3_CHECKSUM"], !text.isEmpty else { return .crc64nvme }
        guard let mode = S3ChecksumMode(rawValue: text.lowercased()) else {
            throw ModelCastError.usage("MODELCAST_S3_CHECKSUM='\(text)' is not a checksum mode: use crc64nvme, sha256 or none")
        }
        return mode
    }

    /// The endpoint for `location`: the flags, then the environment. A bucket whose
    /// name contains '.' is addressed path-style unless the user chose: in a virtual
    /// host name (`my.bucket.s3.us-east-1.amazonaws.com`) it would not match the
    /// certificate's single-level wildcard (`*.s3.us-east-1.amazonaws.com`), and TLS fails.
    func s3Endpoint(for location: S3Location, environment: [String: String]) throws -> S3Endpoint {
        let region = try AWSEnvironment.region(self.region, environment)
        return try S3Endpoint(
            endpoint: AWSEnvironment.endpoint(self.endpoint, environment), region: region,
            pathStyle: pathStyle ?? (location.bucket.contains(".") ? true : nil))
    }
}

