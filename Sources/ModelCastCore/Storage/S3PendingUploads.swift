import Foundation

/// Multipart uploads begun and never finished: listed and aborted (`prune --abort-uploads-older-than`).
extension S3Storage {
    /// Multipart uploads in progress under the target prefix (ListMultipartUploads).
    package func pendingUploads() async throws -> [PendingUpload] {
        try await listUploads().map(\.upload)
    }

    /// Multipart uploads in progress under the target prefix, with the checksum
    /// algorithm each was created with, where the store lists it.
    func listUploads() async throws -> [(upload: PendingUpload, checksumAlgorithm: String?)] {
        let fullPrefix = target.objectKey("")
        var uploads: [(upload: PendingUpload, checksumAlgorithm: String?)] = []
        var markers: (key: String, upload: String)?
        repeat {
            var query = [("uploads", "")]
            if let markers { query += [("key-marker", markers.key), ("upload-id-marker", markers.upload)] }
            let response = try await client.send("GET", key: nil, query: query, operation: "ListMultipartUploads")
            guard response.status == 200 else { throw client.error(response, operation: "ListMultipartUploads", key: fullPrefix) }
            for block in XMLFields.blocks("Upload", in: response.body) {
                guard let key = XMLFields.first("Key", in: block), key.hasPrefix(fullPrefix),
                      let uploadID = XMLFields.first("UploadId", in: block),
                      let initiated = XMLFields.first("Initiated", in: block).flatMap(parseTimestamp) else { continue }
                let algorithm = XMLFields.first("ChecksumAlgorithm", in: block).flatMap { $0.isEmpty ? nil : $0 }
                uploads.append((PendingUpload(key: String(key.dropFirst(fullPrefix.count)), uploadID: uploadID, initiated: initiated), algorithm))
            }
            markers = nil
            if XMLFields.first("IsTruncated", in: response.body) == "true",
               let key = XMLFields.first("NextKeyMarker", in: response.body), let upload = XMLFields.first("NextUploadIdMarker", in: response.body) {
                markers = (key, upload)
            }
        } while markers != nil
        return uploads.sorted { ($0.upload.key, $0.upload.uploadID) < ($1.upload.key, $1.upload.uploadID) }
    }

    /// Aborts a multipart upload, freeing the parts the store keeps (and bills) for it.
    package func abortUpload(key: String, uploadID: String) async throws {
        let objectKey = target.objectKey(key)
        let response = try await client.send("DELETE", key: objectKey, query: [("uploadId", uploadID)], operation: "AbortMultipartUpload")
        guard response.status == 204 || response.status == 200 || response.status == 404 else {
            throw client.error(response, operation: "AbortMultipartUpload", key: objectKey)
        }
    }
}
