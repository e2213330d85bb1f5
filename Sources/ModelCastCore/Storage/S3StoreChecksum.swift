import Foundation

extension S3Storage {
    /// The checksum S3 keeps for an object, as a HEAD with checksum mode reports it: a
    /// SHA-256 where there is one, else a CRC-64/NVME.
    enum StoreChecksum: Equatable {
        /// Of the whole object; `declared` when the store said so (`x-amz-checksum-type: FULL_OBJECT`).
        case fullObject(SHA256Digest, declared: Bool)
        /// Of the concatenated SHA-256s of its parts (a multipart upload); `parts` when known.
        case composite(SHA256Digest, parts: Int?)
        /// The CRC-64/NVME of the whole object (always full-object at S3, R2 and moto).
        case crc64nvme(CRC64NVME)
        /// None, or none in a form this can use.
        case none

        init(_ headers: [String: String]) {
            guard var value = headers["x-amz-checksum-sha256"]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else {
                self = headers["x-amz-checksum-crc64nvme"].flatMap(CRC64NVME.init(base64:)).map { .crc64nvme($0) } ?? .none
                return
            }
            var parts: Int?
            var composite = false
            var declared = false
            // `BASE64-N`: a composite over N parts.
            if let dash = value.lastIndex(of: "-"), let count = Int(value[value.index(after: dash)...]) {
                parts = count
                composite = true
                value = String(value[..<dash])
            }
            // A multipart object's ETag is `"HEX-N"`.
            let etag = (headers["etag"] ?? "").replacingOccurrences(of: "\"", with: "")
            var etagParts: Int?
            if let dash = etag.lastIndex(of: "-"), let count = Int(etag[etag.index(after: dash)...]) { etagParts = count }
            switch headers["x-amz-checksum-type"]?.uppercased() {
            case "COMPOSITE": composite = true
            case "FULL_OBJECT":
                composite = false
                declared = true
            default: if etagParts != nil { composite = true }
            }
            guard let raw = Data(base64Encoded: value), let digest = SHA256Digest(bytes: Array(raw)) else {
                self = .none
                return
            }
            self = composite ? .composite(digest, parts: parts ?? etagParts) : .fullObject(digest, declared: declared)
        }
    }
}
