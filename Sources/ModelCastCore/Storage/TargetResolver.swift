import Foundation

/// How to reach a publish target, as the user gave it.
public struct TargetSettings: Sendable {
    /// A directory path or `s3://bucket/prefix`.
    public var target: String
    public var endpoint: String?
    public var region: String?
    /// nil: path style for custom endpoints, virtual-host style for AWS (path style
    /// for a bucket whose name contains '.', which AWS's wildcard certificate cannot cover).
    public var pathStyle: Bool?
    public var policy = S3UploadPolicy()
    public var retries = 4

    public init(target: String) { self.target = target }

    /// True for `s3://` targets.
    public var isS3: Bool { target.lowercased().hasPrefix("s3://") }

    /// Opens the target: a `DirectoryStorage` or an `S3Storage` with credentials from
    /// the environment. Options that only apply to S3 are refused for a directory.
    /// `log` receives notes for the user (a directory waiting for another publish's lock).
    public func open(environment: [String: String], log: @escaping @Sendable (String) -> Void = { _ in }) throws -> any Storage {
        if isS3 {
            let location = try S3Location(target)
            let endpoint = try s3Endpoint(for: location, environment: environment)
            let credentials = try AWSEnvironment.credentials(environment)
            return try S3Storage(target: location, endpoint: endpoint, credentials: credentials, policy: policy, retries: retries)
        }
        if endpoint != nil || region != nil || pathStyle != nil {
            throw ModelCastError.usage("--endpoint, --region and --path-style apply to s3:// targets, not the directory \(target)")
        }
        return DirectoryStorage(root: target, log: log)
    }
}

extension TargetSettings {
    /// The endpoint for `location`: the flags, then the environment. A bucket whose
    /// name contains '.' is addressed path-style unless the user chose: in a virtual
    /// host name (`my.bucket.s3.us-east-1.amazonaws.com`) it would not match the
    /// certificate's single-level wildcard (`*.s3.us-east-1.amazonaws.com`), and TLS fails.
    func s3Endpoint(for location: S3Location, environment: [String: String]) throws -> S3Endpoint {
        let region = AWSEnvironment.region(self.region, environment)
        return try S3Endpoint(
            endpoint: AWSEnvironment.endpoint(self.endpoint, environment), region: region,
            pathStyle: pathStyle ?? (location.bucket.contains(".") ? true : nil))
    }
}

