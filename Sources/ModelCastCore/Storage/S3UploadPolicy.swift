import Foundation

/// Multipart settings for large objects.
package struct S3UploadPolicy: Sendable {
    /// Objects larger than this go through multipart upload (S3 needs it above 5 GiB).
    package var multipartThreshold: Int64 = 64 << 20
    /// Part size: every part but the last has exactly this size (R2 requires equal parts).
    package var partSize: Int64 = 16 << 20
    /// Parts uploaded at once.
    package var concurrentParts = 16
    /// Whether objects carry an S3 SHA-256 checksum the store checks and keeps.
    package var checksum = S3ChecksumMode.sha256

    package static let singlePutLimit: Int64 = 5 << 30
    package static let minimumPartSize: Int64 = 5 << 20
    package static let maximumParts: Int64 = 10_000

    package init() {}

    /// Checks the numbers against S3's limits.
    package func validate() throws {
        guard partSize >= Self.minimumPartSize, partSize <= Self.singlePutLimit else {
            throw ModelCastError.usage("part size \(partSize) must be between 5 MiB and 5 GiB (S3's limits)")
        }
        guard multipartThreshold >= Self.minimumPartSize, multipartThreshold <= Self.singlePutLimit else {
            throw ModelCastError.usage("multipart threshold \(multipartThreshold) must be between 5 MiB and 5 GiB")
        }
        guard (1...32).contains(concurrentParts) else {
            throw ModelCastError.usage("concurrent parts \(concurrentParts) must be between 1 and 32")
        }
    }
}

/// Whether requests carry S3's SHA-256 checksums (`--checksum`).
package enum S3ChecksumMode: String, Sendable, CaseIterable {
    /// `x-amz-checksum-sha256` on every upload (each part's, for a multipart upload), which
    /// the store checks against the bytes and keeps; HEADs ask for the stored checksum
    /// (`x-amz-checksum-mode`), which proves an object without downloading it.
    case sha256
    /// No `x-amz-checksum-*` header at all, for stores that refuse them (Backblaze B2
    /// answers 400). Uploads are still signed with their SHA-256 as the payload hash and
    /// carry `x-amz-meta-sha256`; an existing object is proven by downloading and hashing
    /// it; an interrupted multipart upload is not resumed (nothing proves its parts).
    case none
}
