import ArgumentParser
import ModelCastCore

/// How to reach an S3-compatible store (`s3://bucket/prefix`).
struct S3ConnectionOptions: ParsableArguments {
    // `--endpoint-url` is the aws cli's spelling (the upload script uses it): accepted too.
    @Option(name: [.long, .customLong("endpoint-url")], help: ArgumentHelp("S3-compatible endpoint URL (or $AWS_ENDPOINT_URL).", valueName: "URL"))
    var endpoint: String?

    @Option(help: "Region (R2: auto; default: $AWS_REGION or us-east-1).")
    var region: String?

    @Flag(inversion: .prefixedNo, help: ArgumentHelp("Bucket in the path (custom endpoints' default), not the host name (AWS').", visibility: .hidden))
    var pathStyle: Bool?

    // What each mode sends, and $MODELCAST_S3_CHECKSUM: docs/cli.md#s3-checksums.
    @Option(help: ArgumentHelp(
        "Upload checksum headers (default: crc64nvme).",
        valueName: "MODE", visibility: .hidden))
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

    @Option(help: ArgumentHelp("Objects larger than this many MiB use multipart upload.", valueName: "MiB", visibility: .hidden))
    var multipartThreshold: Int = 64

    @Option(help: ArgumentHelp("Multipart part size in MiB (every part but the last).", valueName: "MiB", visibility: .hidden))
    var partSize: Int = 16

    @Option(help: ArgumentHelp("Parts uploaded at once.", visibility: .hidden))
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
