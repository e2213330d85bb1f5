import Foundation

/// The checksum S3 is sent for each part of a multipart upload.
package enum PartChecksumAlgorithm: String, Sendable {
    /// CRC-64/NVME, combined by the store into a full-object checksum (`FULL_OBJECT`):
    /// cheap enough to share the SHA-256 pass without doubling its cost.
    case crc64nvme = "CRC64NVME"
    /// SHA-256 per part, which the store combines into a composite (the SHA-256 of the
    /// parts' digests): a second SHA-256 pass over every byte.
    case sha256 = "SHA256"

    /// The element of a ListParts/CompleteMultipartUpload part holding this checksum.
    var xmlElement: String { "Checksum\(rawValue)" }

    /// The header holding this checksum.
    var header: String { "x-amz-checksum-\(rawValue.lowercased())" }
}

/// How a multipart upload cuts an object and checksums its parts: the part size and the
/// algorithm, decided together by the store (`MultipartUploads.plan`) and carried together
/// to the read that hashes the object, so the parts it makes are the ones the upload sends.
package struct PartPlan: Sendable, Equatable {
    /// Bytes in every part but the last.
    package let size: Int64
    package let algorithm: PartChecksumAlgorithm

    package init(size: Int64, algorithm: PartChecksumAlgorithm = .crc64nvme) {
        self.size = size
        self.algorithm = algorithm
    }
}

/// One part's checksum.
package enum PartChecksum: Sendable, Equatable {
    case crc64nvme(CRC64NVME)
    case sha256(SHA256Digest)

    package var base64: String {
        switch self {
        case .crc64nvme(let crc): crc.base64
        case .sha256(let digest): digest.base64
        }
    }
}

/// The checksum of each consecutive `partSize`-byte part of a byte stream (the last
/// part may be shorter): what an S3 multipart upload sends with each part. Computed in
/// the same read as the stream's whole SHA-256, so the parts are proven to be the
/// pieces of the bytes the manifest names.
package struct PartDigests: Sendable, Equatable {
    /// Bytes in every part but the last.
    package let partSize: Int64
    package let algorithm: PartChecksumAlgorithm
    /// One checksum per part, in order, each of `algorithm`.
    package let checksums: [PartChecksum]

    package init(partSize: Int64, algorithm: PartChecksumAlgorithm, checksums: [PartChecksum]) {
        self.partSize = partSize
        self.algorithm = algorithm
        self.checksums = checksums
    }

    package init(partSize: Int64, digests: [SHA256Digest]) {
        self.init(partSize: partSize, algorithm: .sha256, checksums: digests.map { .sha256($0) })
    }

    package init(partSize: Int64, crcs: [CRC64NVME]) {
        self.init(partSize: partSize, algorithm: .crc64nvme, checksums: crcs.map { .crc64nvme($0) })
    }

    /// The byte range of part `index` (0-based) of a stream of `size` bytes.
    package func range(ofPart index: Int, size: Int64) -> (offset: Int64, length: Int64) {
        let offset = Int64(index) * partSize
        return (offset, min(partSize, size - offset))
    }

    /// True when these are the `algorithm` checksums of a stream of `size` bytes cut at `partSize`.
    package func fit(size: Int64, partSize: Int64, algorithm: PartChecksumAlgorithm) -> Bool {
        self.algorithm == algorithm && self.partSize == partSize && Int64(checksums.count) == (size + partSize - 1) / partSize
    }

    /// True when these are the checksums `plan` makes of a stream of `size` bytes.
    package func fit(_ plan: PartPlan, size: Int64) -> Bool {
        fit(size: size, partSize: plan.size, algorithm: plan.algorithm)
    }

    /// S3's composite SHA-256 of a multipart object with these parts: the SHA-256 of
    /// the parts' digests, concatenated. nil for CRC parts.
    package func composite() throws -> SHA256Digest? {
        var bytes: [UInt8] = []
        for checksum in checksums {
            guard case .sha256(let digest) = checksum else { return nil }
            bytes += digest.bytes
        }
        return try SHA256Hasher.digest(bytes)
    }

    /// The CRC-64/NVME of the whole stream of `size` bytes, combined from its parts'
    /// (whatever the part size). nil for SHA-256 parts or a part count `size` does not give.
    package func fullObjectCRC(size: Int64) -> CRC64NVME? {
        guard algorithm == .crc64nvme, partSize > 0, Int64(checksums.count) == (size + partSize - 1) / partSize else { return nil }
        var whole = CRC64NVME()
        for (index, checksum) in checksums.enumerated() {
            guard case .crc64nvme(let crc) = checksum else { return nil }
            whole = whole.followed(by: crc, length: range(ofPart: index, size: size).length)
        }
        return whole
    }
}

/// Checksums a byte stream part by part (`PartDigests`); bytes arrive in any chunking.
final class PartHasher {
    private enum Running {
        case crc64nvme(CRC64NVME)
        case sha256(SHA256Hasher)
    }

    private let partSize: Int64
    private let algorithm: PartChecksumAlgorithm
    private var current: Running?
    private var inPart: Int64 = 0
    private var checksums: [PartChecksum] = []

    init(_ plan: PartPlan) {
        precondition(plan.size > 0)
        partSize = plan.size
        algorithm = plan.algorithm
    }

    func update(_ bytes: UnsafeRawBufferPointer) throws {
        var rest = bytes
        while !rest.isEmpty {
            let n = Int(min(Int64(rest.count), partSize - inPart))
            try add(UnsafeRawBufferPointer(rebasing: rest[0..<n]))
            inPart += Int64(n)
            rest = UnsafeRawBufferPointer(rebasing: rest[n...])
            if inPart == partSize { endPart() }
        }
    }

    private func add(_ bytes: UnsafeRawBufferPointer) throws {
        let running = try current ?? (algorithm == .sha256 ? .sha256(SHA256Hasher()) : .crc64nvme(CRC64NVME()))
        switch running {
        case .crc64nvme(var crc):
            crc.update(bytes)
            current = .crc64nvme(crc)
        case .sha256(let hasher):
            hasher.update(bytes)
            current = .sha256(hasher)
        }
    }

    private func endPart() {
        switch current {
        case .crc64nvme(let crc): checksums.append(.crc64nvme(crc))
        case .sha256(let hasher): checksums.append(.sha256(hasher.finalize()))
        case nil: break
        }
        current = nil
        inPart = 0
    }

    /// The checksums; call once, after the last bytes.
    func finish() -> PartDigests {
        if inPart > 0 { endPart() }
        return PartDigests(partSize: partSize, algorithm: algorithm, checksums: checksums)
    }
}
