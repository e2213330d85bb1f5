import Foundation

/// Multipart uploads begun and never finished (a publish killed mid-upload): listed,
/// aborted (`prune --abort-uploads-older-than`), and the one a new upload of the same
/// bytes can resume found.
struct S3PendingUploads: Sendable {
    let client: S3Client
    let target: S3Location
    let policy: S3UploadPolicy

    /// Multipart uploads in progress under the target prefix (ListMultipartUploads).
    func list() async throws -> [PendingUpload] {
        try await listWithAlgorithms().map(\.upload)
    }

    /// Multipart uploads in progress under the target prefix, with the checksum
    /// algorithm each was created with, where the store lists it.
    func listWithAlgorithms() async throws -> [(upload: PendingUpload, checksumAlgorithm: String?)] {
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
    func abort(key: String, uploadID: String) async throws {
        let objectKey = target.objectKey(key)
        let response = try await client.send("DELETE", key: objectKey, query: [("uploadId", uploadID)], operation: "AbortMultipartUpload")
        guard response.status == 204 || response.status == 200 || response.status == 404 else {
            throw client.error(response, operation: "AbortMultipartUpload", key: objectKey)
        }
    }

    /// An upload a killed run left that a new upload of the same bytes can finish: its id
    /// and the ETag of each part it holds, by index.
    struct Resumable {
        let uploadID: String
        let stored: [Int: String]
    }

    /// A multipart upload of `key` that a killed run left behind and this run can finish:
    /// created with this run's part checksum algorithm, holding at least one part, and
    /// every part it holds proven to be the local bytes of that part: its size, and the
    /// part's checksum as the store lists it or, where the store lists none (moto), its
    /// ETag equal to the MD5 of the local bytes (the object's checksum is checked once the
    /// upload completes either way). Of several, the one holding the most parts. nil with
    /// `--checksum none` (nothing would prove the parts), or when none qualifies. Uploads
    /// not resumed are left alone, never aborted: they may be another run's, still going
    /// (`prune --abort-uploads-older-than` removes stale ones).
    func resumable(_ key: String, path: String, size: Int64, parts: PartDigests) async throws -> Resumable? {
        guard policy.checksum.sendsChecksums else { return nil }
        let candidates = try await listWithAlgorithms().filter {
            $0.upload.key == key && ($0.checksumAlgorithm.map { $0.uppercased() == parts.algorithm.rawValue } ?? true)
        }
        var md5s: [Int: String] = [:]
        var best: Resumable?
        for candidate in candidates {
            guard let stored = try await provenParts(candidate.upload, path: path, size: size, parts: parts, md5s: &md5s),
                  stored.count > (best?.stored.count ?? 0) else { continue }
            best = Resumable(uploadID: candidate.upload.uploadID, stored: stored)
        }
        return best
    }

    /// A part ListParts reports: its index, size, ETag and checksum (when listed).
    struct ListedPart {
        let index: Int
        let size: Int64
        let etag: String
        let checksum: String?
    }

    /// The parts `upload` holds (ListParts), by index with their ETags; nil when one of
    /// them is not proven to be the local bytes of that part, or the upload is gone.
    /// Parts the store lists without a checksum are recognised by the MD5 of the local
    /// part (their ETag at moto and most stores), hashed on every core at once.
    func provenParts(_ upload: PendingUpload, path: String, size: Int64, parts: PartDigests, md5s: inout [Int: String]) async throws -> [Int: String]? {
        guard let listed = try await listParts(upload, parts: parts) else { return nil }
        for part in listed where part.size != parts.range(ofPart: part.index, size: size).length { return nil }
        let unhashed = listed.filter { $0.checksum == nil && md5s[$0.index] == nil }.map(\.index)
        let hashed = ResultBox<String>(count: unhashed.count)
        DispatchQueue.concurrentPerform(iterations: unhashed.count) { slot in
            let (offset, length) = parts.range(ofPart: unhashed[slot], size: size)
            hashed.set(slot, Result { try MD5Hasher.hex(ofFile: path, offset: offset, length: length) })
        }
        for (slot, result) in hashed.values.enumerated() { md5s[unhashed[slot]] = try result!.get() }
        var stored: [Int: String] = [:]
        for part in listed {
            if let checksum = part.checksum {
                guard checksum == parts.checksums[part.index].base64 else { return nil }
            } else {
                guard part.etag.replacingOccurrences(of: "\"", with: "").lowercased() == md5s[part.index] else { return nil }
            }
            stored[part.index] = part.etag
        }
        return stored
    }

    /// Every part of `upload` (ListParts, page by page); nil when the upload is gone, was
    /// made with another checksum algorithm, or lists a part this file does not have.
    func listParts(_ upload: PendingUpload, parts: PartDigests) async throws -> [ListedPart]? {
        let objectKey = target.objectKey(upload.key)
        var listed: [ListedPart] = []
        var marker: String?
        repeat {
            var query = [("uploadId", upload.uploadID)]
            if let marker { query.append(("part-number-marker", marker)) }
            let response = try await client.send("GET", key: objectKey, query: query, operation: "ListParts")
            if response.status == 404 { return nil }
            guard response.status == 200 else { throw client.error(response, operation: "ListParts", key: objectKey) }
            if let algorithm = XMLFields.first("ChecksumAlgorithm", in: response.body), algorithm.uppercased() != parts.algorithm.rawValue { return nil }
            for block in XMLFields.blocks("Part", in: response.body) {
                guard let number = XMLFields.first("PartNumber", in: block).flatMap(Int.init), number >= 1, number <= parts.checksums.count,
                      let storedSize = XMLFields.first("Size", in: block).flatMap(Int64.init),
                      let etag = XMLFields.first("ETag", in: block) else { return nil }
                listed.append(ListedPart(index: number - 1, size: storedSize, etag: etag, checksum: XMLFields.first(parts.algorithm.xmlElement, in: block)))
            }
            marker = XMLFields.first("IsTruncated", in: response.body) == "true" ? XMLFields.first("NextPartNumberMarker", in: response.body) : nil
        } while marker != nil
        return listed
    }
}
