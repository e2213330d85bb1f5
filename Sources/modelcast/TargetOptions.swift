import ArgumentParser
import ModelCastCore

/// How to reach an S3-compatible store (`s3://bucket/prefix`).
struct S3ConnectionOptions: ParsableArguments {
    // `--endpoint-url` is the aws cli's spelling (the upload script uses it): accepted too.
    @Option(name: [.long, .customLong("endpoint-url")], help: ArgumentHelp("S3-compatible endpoint, e.g. https://ACCOUNT.r2.cloudflarestorage.com (or $AWS_ENDPOINT_URL).", valueName: "URL"))
    var endpoint: String?

    @Option(help: "Region (R2: auto; default $AWS_REGION, the AWS config file, or us-east-1).")
    var region: String?

    @Flag(inversion: .prefixedNo, help: "Put the bucket in the path (what custom endpoints get unless told) rather than the host name (what AWS gets).")
    var pathStyle: Bool?

    @Option(help: ArgumentHelp(
        "crc64nvme (default): an object sent whole carries its SHA-256, a multipart upload's parts CRC-64/NVME checksums (the store keeps a full-object one); sha256: parts carry SHA-256 (composite; a second hash pass); none: no x-amz-checksum-* header, for stores that refuse them (Backblaze B2), objects then proven by download (or $MODELCAST_S3_CHECKSUM).",
        valueName: "crc64nvme|sha256|none"))
    var checksum: S3ChecksumMode?

    /// The target settings for `target`.
    func settings(for target: String) -> TargetSettings {
        var settings = TargetSettings(target: target)
        settings.endpoint = endpoint
        settings.region = region
        settings.pathStyle = pathStyle
        settings.checksum = checksum
        return settings
    }
}

extension S3ChecksumMode: ExpressibleByArgument {}

/// Options for reaching an S3-compatible target and uploading to it (`--to s3://bucket/prefix`).
struct TargetOptions: ParsableArguments {
    @OptionGroup
    var connection: S3ConnectionOptions

    @Option(help: ArgumentHelp("Objects larger than this many MiB use multipart upload.", valueName: "MiB"))
    var multipartThreshold: Int = 64

    @Option(help: ArgumentHelp("Multipart part size in MiB; every part but the last has this size.", valueName: "MiB"))
    var partSize: Int = 16

    @Option(help: "Parts uploaded at once.")
    var concurrentParts: Int = 16

    /// The target settings for `target`.
    func settings(for target: String) -> TargetSettings {
        var settings = connection.settings(for: target)
        settings.policy.multipartThreshold = Int64(multipartThreshold) << 20
        settings.policy.partSize = Int64(partSize) << 20
        settings.policy.concurrentParts = concurrentParts
        return settings
    }
}
