import Foundation
internal import CCRC64

/// CRC-64/NVME, the checksum S3 calls `CRC64NVME`: what each part of a multipart upload
/// carries, and what the store keeps for the whole object (`FULL_OBJECT`). A few GB/s on
/// one core (carry-less multiplication), so it costs a fraction of the SHA-256 pass it
/// shares a read with. It proves bytes against accidents on the way and in the store,
/// not against a writer who crafts a collision; the SHA-256 in the manifest is what a
/// device checks.
package struct CRC64NVME: Sendable, Equatable {
    /// The checksum of the bytes so far (0 before any).
    package private(set) var value: UInt64 = 0

    package init() {}

    package init(value: UInt64) { self.value = value }

    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        value = modelcast_crc64nvme_update(value, base, bytes.count)
    }

    package static func checksum(_ bytes: [UInt8]) -> CRC64NVME {
        var crc = CRC64NVME()
        bytes.withUnsafeBytes { crc.update($0) }
        return crc
    }

    /// The checksum of these bytes followed by `next`'s `nextLength` bytes.
    package func followed(by next: CRC64NVME, length nextLength: Int64) -> CRC64NVME {
        CRC64NVME(value: modelcast_crc64nvme_combine(value, next.value, UInt64(nextLength)))
    }

    /// Big-endian, as S3 encodes it.
    package var bytes: [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) } }

    /// Base64 of the big-endian bytes: the value of `x-amz-checksum-crc64nvme`.
    package var base64: String { Data(bytes).base64EncodedString() }

    /// A header or XML value; nil unless it is base64 of exactly 8 bytes.
    package init?(base64: String) {
        guard let data = Data(base64Encoded: base64.trimmingCharacters(in: .whitespaces)), data.count == 8 else { return nil }
        value = data.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// True when the carry-less multiplication path is in use on this CPU.
    package static var isAccelerated: Bool { modelcast_crc64nvme_accelerated() != 0 }
}
