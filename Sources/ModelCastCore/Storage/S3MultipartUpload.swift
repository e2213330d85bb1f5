import Foundation

/// Uploads of staged files: a single conditional PUT, or parts (resumed from a killed
/// run's upload where its parts are proven to be these bytes), never completed when the
/// file changed after it was hashed.
extension S3Storage {
    /// Fails, naming the file and what changed, if the file at `path` is no longer
    /// the one in `hashed` (nil: a temporary copy, nothing to check).
    func checkUnchanged(_ path: String, since hashed: FileSnapshot?) throws {
        guard let hashed else { return }
        let now = try FileSnapshot.current(path)
        guard now == hashed else {
            throw ModelCastError.io(
                operation: "upload", path: path,
                reason: "the file changed after it was hashed (\(now.changes(since: hashed))), so it may no longer hold the bytes whose SHA-256 is being published; run again once nothing writes to it")
        }
    }

    /// Objects over the threshold (or over S3's single-PUT limit) go up in parts.
    func isMultipart(_ size: Int64) -> Bool {
        size > policy.multipartThreshold || size > S3UploadPolicy.singlePutLimit
    }

    /// The policy's part size, grown (in whole MiB) where it would take more than S3's 10,000 parts.
    func partSize(forObjectOf size: Int64) -> Int64 {
        let partSize = policy.partSize
        guard (size + partSize - 1) / partSize > S3UploadPolicy.maximumParts else { return partSize }
        let mib: Int64 = 1 << 20
        return ((size + S3UploadPolicy.maximumParts - 1) / S3UploadPolicy.maximumParts + mib - 1) / mib * mib
    }

    package func uploadPartSize(forObjectOf size: Int64) -> Int64? {
        isMultipart(size) ? partSize(forObjectOf: size) : nil
    }

    func upload(_ key: String, staged: StagedObject, hashed: FileSnapshot?) async throws -> PutOutcome {
        let size = staged.metadata.size
        let partSize = uploadPartSize(forObjectOf: size)
        // The parts' checksums, when the pass that hashed the artifact made them for this part size.
        let algorithm = policy.checksum.partAlgorithm
        let known = partSize.flatMap { partSize in staged.parts.flatMap { $0.fit(size: size, partSize: partSize, algorithm: algorithm) ? $0 : nil } }
        // Existing content first: re-publishing proven-identical content uploads nothing.
        if let outcome = try await compare(key, metadata: staged.metadata, localFile: staged.path, parts: known) {
            return outcome
        }
        try checkUnchanged(staged.path, since: hashed)
        guard let partSize else {
            let reporter = progress?("uploading \(key)", size)
            defer { reporter?.finish() }
            let sent = UploadProgress(reporter, parts: 1)
            return try await put(key, body: .file(path: staged.path, offset: 0, length: size, sent: { sent.partSent(0, upTo: $0) }),
                                 metadata: staged.metadata, localFile: staged.path, condition: ("If-None-Match", "*"))
        }
        let parts = try known ?? hashParts(staged, partSize: partSize)
        return try await multipartUpload(key, staged: staged, parts: parts, hashed: hashed)
    }

    /// The parts' checksums of a staged file that came without them (a tree file, a zip
    /// that crossed the threshold, SHA-256 parts for `--checksum sha256|none`), made in one
    /// read that also proves the file still holds the bytes `metadata` names.
    func hashParts(_ staged: StagedObject, partSize: Int64) throws -> PartDigests {
        let digest = try StreamDigester.digestFile(at: staged.path, partSize: partSize, partAlgorithm: policy.checksum.partAlgorithm)
        guard digest.size == staged.metadata.size, digest.sha256 == staged.metadata.sha256, let parts = digest.parts else {
            throw ModelCastError.io(
                operation: "upload", path: staged.path,
                reason: "the file changed after it was hashed (now \(digest.size) bytes, sha256 \(digest.sha256.hex); hashed \(staged.metadata.size) bytes, sha256 \(staged.metadata.sha256.hex)); run again once nothing writes to it")
        }
        return parts
    }

    /// A multipart upload under way: its id, the ETag of each part stored so far (by
    /// index), and whether this run created it (only then may this run abort it).
    struct MultipartUpload {
        let id: String
        let stored: [Int: String]
        let createdHere: Bool
    }

    /// Equal-size parts, uploaded concurrently (bounded) and each retried. Each part
    /// carries the checksum made in the read that hashed the artifact (`parts`: CRC-64/NVME
    /// by default; SHA-256, also the signed payload hash, with `--checksum sha256|none`),
    /// so the store checks that the bytes it receives are the bytes hashed, and the file
    /// is read once here, to send it. A multipart upload of
    /// the key a killed run left behind is resumed when its parts are proven to be these
    /// bytes (`resumableUpload`); only the missing parts are sent. An upload this run
    /// started is aborted when it fails, so no half-made object or stray parts stay
    /// behind, except when the store could not be reached: then its parts stay for the
    /// next publish to resume (`prune --abort-uploads-older-than` removes them otherwise).
    func multipartUpload(_ key: String, staged: StagedObject, parts: PartDigests, hashed: FileSnapshot?) async throws -> PutOutcome {
        let objectKey = target.objectKey(key)
        let size = staged.metadata.size
        let count = parts.checksums.count
        let reporter = progress?("uploading \(key)", size)
        defer { reporter?.finish() }
        let sent = UploadProgress(reporter, parts: count)
        let upload: MultipartUpload
        if let resumed = try await resumableUpload(key, path: staged.path, size: size, parts: parts) {
            upload = resumed
            log("resuming the interrupted upload of \(location)/\(key): \(resumed.stored.count) of \(count) parts are stored already")
            for index in resumed.stored.keys { sent.partStoredBefore(index, bytes: parts.range(ofPart: index, size: size).length) }
        } else {
            upload = MultipartUpload(id: try await createUpload(objectKey, metadata: staged.metadata), stored: [:], createdHere: true)
        }
        do {
            let etags = try await uploadParts(objectKey, path: staged.path, size: size, parts: parts, upload: upload, sent: sent)
            // The parts' checksums were computed when the file was hashed. S3 refuses a part
            // whose bytes differ from its checksum; for a store that does not, an unchanged
            // file is what proves the parts are the bytes hashed.
            try checkUnchanged(staged.path, since: hashed)
            let completion = try await complete(objectKey, uploadID: upload.id, parts: parts, size: size, etags: etags)
            createdETags.set(key, XMLFields.first("ETag", in: completion.body) ?? completion.headers["etag"])
            try await checkObjectChecksum(key, completion: completion, metadata: staged.metadata, parts: parts, resumed: !upload.createdHere)
            return .created
        } catch let refused as CompletionRefused {
            // The key exists: this run did not create it. Free the parts, then compare.
            if upload.createdHere { await abandon(objectKey, uploadID: upload.id) }
            guard let outcome = try await compare(key, metadata: staged.metadata, localFile: staged.path, parts: parts) else {
                throw client.error(refused.response, operation: "CompleteMultipartUpload", key: objectKey)
            }
            return outcome
        } catch let error as S3Error where error.code == "NoSuchUpload" {
            // Completed or aborted by someone else meanwhile (another run resuming it, a
            // prune): what the key holds now decides.
            if let outcome = try await compare(key, metadata: staged.metadata, localFile: staged.path, parts: parts) { return outcome }
            throw error
        } catch let error as S3Error where error.status == 0 && upload.createdHere {
            // The store cannot be reached (an abort would not get through either): the
            // parts stored so far stay for the next publish of these bytes to resume.
            throw S3Error(operation: error.operation, key: error.key, status: error.status, code: error.code,
                          message: error.message + "; the parts uploaded so far stay in the store, and the next publish of these bytes resumes the upload",
                          bucket: error.bucket, endpoint: error.endpoint)
        } catch {
            if upload.createdHere { await abandon(objectKey, uploadID: upload.id) }
            throw error
        }
    }

    /// CompleteMultipartUpload answered 412: the key exists.
    struct CompletionRefused: Error {
        let response: S3Response
    }

    /// Starts a multipart upload of `objectKey` with the object's headers (and its parts'
    /// checksum algorithm, with the type of object checksum the store keeps); returns its id.
    func createUpload(_ objectKey: String, metadata: ObjectMetadata) async throws -> String {
        let algorithm: [(String, String)] = switch policy.checksum {
        case .crc64nvme: [("x-amz-checksum-algorithm", "CRC64NVME"), ("x-amz-checksum-type", "FULL_OBJECT")]
        case .sha256: [("x-amz-checksum-algorithm", "SHA256")]
        case .none: []
        }
        let create = try await client.send(
            "POST", key: objectKey, query: [("uploads", "")], headers: objectHeaders(metadata) + algorithm, operation: "CreateMultipartUpload")
        guard create.status == 200, let uploadID = XMLFields.first("UploadId", in: create.body) else {
            throw client.error(create, operation: "CreateMultipartUpload", key: objectKey)
        }
        return uploadID
    }

    /// Uploads the parts `upload` does not hold yet, `policy.concurrentParts` at a time,
    /// each streamed from the file; returns every part's ETag, in order.
    func uploadParts(_ objectKey: String, path: String, size: Int64, parts: PartDigests, upload: MultipartUpload,
                             sent: UploadProgress) async throws -> [String] {
        let missing = parts.checksums.indices.filter { upload.stored[$0] == nil }
        let sendsChecksums = policy.checksum.sendsChecksums
        let uploaded = try await boundedMap(missing, concurrency: policy.concurrentParts) { index in
            let (offset, length) = parts.range(ofPart: index, size: size)
            let checksum = parts.checksums[index]
            let operation = "UploadPart \(index + 1)"
            // A SHA-256 part is also the signed payload hash; a CRC part goes unsigned
            // (UNSIGNED-PAYLOAD), the store checking its CRC instead.
            var payload: String?
            if case .sha256(let digest) = checksum { payload = digest.hex }
            let response = try await self.client.send(
                "PUT", key: objectKey, query: [("partNumber", String(index + 1)), ("uploadId", upload.id)],
                headers: sendsChecksums ? [(parts.algorithm.header, checksum.base64)] : [],
                body: .file(path: path, offset: offset, length: length, sent: { sent.partSent(index, upTo: $0) }),
                payloadSHA256: payload, operation: operation)
            guard response.status == 200, let etag = response.headers["etag"] else {
                throw self.client.error(response, operation: operation, key: objectKey)
            }
            return etag
        }
        var etags = upload.stored
        for (index, etag) in zip(missing, uploaded) { etags[index] = etag }
        return parts.checksums.indices.map { etags[$0]! }
    }

    /// CompleteMultipartUpload, only if the key is still absent (as a single PUT is
    /// stored): another publisher may have stored it while the parts went up. With CRC
    /// parts, the whole object's CRC-64/NVME goes along for the store to check.
    func complete(_ objectKey: String, uploadID: String, parts: PartDigests, size: Int64, etags: [String]) async throws -> S3Response {
        let element = parts.algorithm.xmlElement
        var xml = "<CompleteMultipartUpload>"
        for (index, etag) in etags.enumerated() {
            let checksum = policy.checksum.sendsChecksums ? "<\(element)>\(parts.checksums[index].base64)</\(element)>" : ""
            xml += "<Part><PartNumber>\(index + 1)</PartNumber><ETag>\(XMLFields.escape(etag))</ETag>\(checksum)</Part>"
        }
        xml += "</CompleteMultipartUpload>"
        var headers = [("Content-Type", "application/xml"), ("If-None-Match", "*")]
        if policy.checksum.sendsChecksums, let whole = parts.fullObjectCRC(size: size) {
            headers += [("x-amz-checksum-crc64nvme", whole.base64), ("x-amz-checksum-type", "FULL_OBJECT")]
        }
        let response = try await client.send(
            "POST", key: objectKey, query: [("uploadId", uploadID)], headers: headers,
            body: .data(Data(xml.utf8)), operation: "CompleteMultipartUpload", errorIn200: true)
        if response.status == 412 { throw CompletionRefused(response: response) }
        // S3 can answer 200 with an error document for CompleteMultipartUpload.
        guard response.status == 200, XMLFields.first("Code", in: response.body) == nil else {
            throw client.error(response, operation: "CompleteMultipartUpload", key: objectKey)
        }
        return response
    }

    /// The completed object must be the bytes hashed: its full-object CRC-64/NVME, or its
    /// composite SHA-256 checksum (in the completion's answer, else from a HEAD), must be
    /// the one `parts` give. S3 already refuses parts whose bytes differ from their
    /// checksums; this covers stores that do not check them and the parts a resumed upload
    /// kept. A resumed upload on a store that reports no checksum is downloaded and hashed.
    /// Other bytes: the object, which this run created, is removed and the upload fails
    /// naming the key.
    func checkObjectChecksum(_ key: String, completion: S3Response, metadata: ObjectMetadata, parts: PartDigests, resumed: Bool) async throws {
        guard policy.checksum.sendsChecksums else { return }
        do {
            if let answered = XMLFields.first(parts.algorithm.xmlElement, in: completion.body) {
                let value = answered.split(separator: "-").first.map(String.init) ?? answered
                let expected = try parts.fullObjectCRC(size: metadata.size)?.base64 ?? parts.composite()?.base64
                guard value == expected else {
                    throw StorageError.contentMismatch(
                        key: key, expectedSize: metadata.size, expectedSHA256: metadata.sha256.hex, actualSize: metadata.size, actualSHA256: nil,
                        detail: "the store's checksum \(quotedValue(answered)) is not the one of the parts sent (\(expected ?? "none"))")
                }
                return
            }
            _ = try await proveContent(key, size: metadata.size, sha256: metadata.sha256, localFile: nil, parts: parts, trustStored: !resumed)
        } catch let error as StorageError {
            try? await delete(key)
            throw error
        }
    }

    /// Aborts an upload this run started, best effort (the failure being reported matters more).
    func abandon(_ objectKey: String, uploadID: String) async {
        _ = try? await client.send("DELETE", key: objectKey, query: [("uploadId", uploadID)], operation: "AbortMultipartUpload")
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
    func resumableUpload(_ key: String, path: String, size: Int64, parts: PartDigests) async throws -> MultipartUpload? {
        guard policy.checksum.sendsChecksums else { return nil }
        let candidates = try await listUploads().filter {
            $0.upload.key == key && ($0.checksumAlgorithm.map { $0.uppercased() == parts.algorithm.rawValue } ?? true)
        }
        var md5s: [Int: String] = [:]
        var best: MultipartUpload?
        for candidate in candidates {
            guard let stored = try await provenParts(candidate.upload, path: path, size: size, parts: parts, md5s: &md5s),
                  stored.count > (best?.stored.count ?? 0) else { continue }
            best = MultipartUpload(id: candidate.upload.uploadID, stored: stored, createdHere: false)
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
            hashed.set(slot, Result { try Self.md5(path: path, offset: offset, length: length) })
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

    /// MD5 (hex) of a byte range of a file: to recognise a stored part by its ETag.
    static func md5(path: String, offset: Int64, length: Int64) throws -> String {
        let file = try FileDescriptor.openForReading(path)
        let hasher = try MD5Hasher()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var position = offset
        let end = offset + length
        while position < end {
            let want = Int(min(Int64(buffer.count), end - position))
            let n = try file.read(at: position, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]))
            guard n > 0 else { throw ModelCastError.changedWhilePacking(path: path, expected: end, actual: position) }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            position += Int64(n)
        }
        return hasher.finalizeHex()
    }
}
