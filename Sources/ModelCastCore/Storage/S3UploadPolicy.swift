import Foundation

/// Multipart settings for large objects.
package struct S3UploadPolicy: Sendable {
    /// Objects larger than this go through multipart upload (S3 needs it above 5 GiB).
    package var multipartThreshold: Int64 = 64 << 20
    /// Part size: every part but the last has exactly this size (R2 requires equal parts).
    package var partSize: Int64 = 16 << 20
    /// Parts uploaded at once.
    package var concurrentParts = 16
    /// Which checksums objects and parts carry for the store to check and keep.
    package var checksum = S3ChecksumMode.crc64nvme

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

    /// Objects over the threshold (or over S3's single-PUT limit) go up in parts.
    func isMultipart(_ size: Int64) -> Bool {
        size > multipartThreshold || size > Self.singlePutLimit
    }

    /// The part size, grown (in whole MiB) where it would take more than S3's 10,000 parts.
    func partSize(forObjectOf size: Int64) -> Int64 {
        guard (size + partSize - 1) / partSize > Self.maximumParts else { return partSize }
        let mib: Int64 = 1 << 20
        return ((size + Self.maximumParts - 1) / Self.maximumParts + mib - 1) / mib * mib
    }

    /// The parts an object of `size` bytes is uploaded in (their size, and the checksum
    /// `--checksum` gives them), or nil when it is stored whole.
    func partPlan(forObjectOf size: Int64) -> PartPlan? {
        isMultipart(size) ? PartPlan(size: partSize(forObjectOf: size), algorithm: checksum.partAlgorithm) : nil
    }
}

/// Which checksums requests carry for the store to check and keep (`--checksum`).
package enum S3ChecksumMode: String, Sendable, CaseIterable {
    /// The default. An object sent whole carries its SHA-256 (`x-amz-checksum-sha256`,
    /// hashed anyway for the manifest); a multipart upload's parts carry CRC-64/NVME
    /// checksums, and the store keeps a full-object CRC-64/NVME checksum (one SHA-256
    /// pass per upload). HEADs ask for the stored checksum (`x-amz-checksum-mode`).
    case crc64nvme
    /// As `crc64nvme`, but a multipart upload's parts carry SHA-256 checksums (the store
    /// keeps a composite of them): a second SHA-256 pass, for stores without CRC-64/NVME.
    case sha256
    /// No `x-amz-checksum-*` header at all, for stores that refuse them (Backblaze B2
    /// answers 400). Uploads are still signed with their SHA-256 as the payload hash and
    /// carry `x-amz-meta-sha256`; an existing object is proven by downloading and hashing
    /// it; an interrupted multipart upload is not resumed (nothing proves its parts).
    case none

    /// What a multipart upload's parts are checksummed (or, with `none`, signed) with.
    var partAlgorithm: PartChecksumAlgorithm { self == .crc64nvme ? .crc64nvme : .sha256 }

    /// Whether any `x-amz-checksum-*` header is sent.
    var sendsChecksums: Bool { self != .none }
}
