import Foundation

/// One object uploaded in parts: equal-size parts sent concurrently, each with the checksum
/// made when the file was hashed, resumed from a killed run's upload where its parts are
/// proven to be these bytes, completed only if the key is still absent, and never completed
/// when the file changed after it was hashed.
struct S3MultipartUploader: Sendable {
    let objects: S3Objects
    let prover: S3ContentProver
    let pending: S3PendingUploads
    /// Reports each object upload; nil reports nothing.
    let progress: ProgressFactory?

    var client: S3Client { objects.client }
    var policy: S3UploadPolicy { objects.policy }

    /// The parts' checksums of a staged file that came without them or with others (a zip
    /// that crossed the threshold, a part size the first pass did not know), made in one
    /// read that also proves the file still holds the bytes `metadata` names. The pass that
    /// hashed the artifact makes them to the store's plan (`MultipartUploads.plan`).
    func hashParts(_ staged: StagedObject, plan: PartPlan) throws -> PartDigests {
        let digest = try StreamDigester.digestFile(at: staged.path, parts: plan)
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
    /// bytes (`S3PendingUploads.resumable`); only the missing parts are sent. An upload this run
    /// started is aborted when it fails, so no half-made object or stray parts stay
    /// behind, except when the store could not be reached: then its parts stay for the
    /// next publish to resume (`prune --abort-uploads-older-than` removes them otherwise).
    /// An abort that fails is said (`abandon`).
    func upload(_ key: String, staged: StagedObject, parts: PartDigests, hashed: FileSnapshot?) async throws -> PutOutcome {
        let objectKey = objects.target.objectKey(key)
        let size = staged.metadata.size
        let count = parts.checksums.count
        let reporter = progress?("uploading \(key)", size)
        defer { reporter?.finish() }
        let sent = UploadProgress(reporter, parts: count)
        let upload: MultipartUpload
        if let resumed = try await pending.resumable(key, path: staged.path, size: size, parts: parts) {
            upload = MultipartUpload(id: resumed.uploadID, stored: resumed.stored, createdHere: false)
            objects.log("resuming the interrupted upload of \(objects.shown(key)): \(resumed.stored.count) of \(count) parts are stored already")
            for index in resumed.stored.keys { sent.partStoredBefore(index, bytes: parts.range(ofPart: index, size: size).length) }
        } else {
            upload = MultipartUpload(id: try await createUpload(objectKey, metadata: staged.metadata), stored: [:], createdHere: true)
        }
        do {
            let etags = try await uploadParts(objectKey, path: staged.path, size: size, parts: parts, upload: upload, sent: sent)
            // The parts' checksums were computed when the file was hashed. S3 refuses a part
            // whose bytes differ from its checksum; for a store that does not, an unchanged
            // file is what proves the parts are the bytes hashed.
            try S3Uploader.checkUnchanged(staged.path, since: hashed)
            let completion = try await complete(objectKey, uploadID: upload.id, parts: parts, size: size, etags: etags)
            objects.created.set(key, XMLFields.first("ETag", in: completion.body) ?? completion.headers["etag"])
            try await checkObjectChecksum(key, completion: completion, metadata: staged.metadata, parts: parts, resumed: !upload.createdHere)
            return .created
        } catch let refused as CompletionRefused {
            // The key exists: this run did not create it. Free the parts, then compare.
            if upload.createdHere { await abandon(key, uploadID: upload.id) }
            guard let outcome = try await prover.compare(key, metadata: staged.metadata, localFile: staged.path, parts: parts) else {
                throw client.error(refused.response, operation: "CompleteMultipartUpload", key: objectKey)
            }
            return outcome
        } catch let error as S3Error where error.code == "NoSuchUpload" {
            // Completed or aborted by someone else meanwhile (another run resuming it, a
            // prune): what the key holds now decides.
            if let outcome = try await prover.compare(key, metadata: staged.metadata, localFile: staged.path, parts: parts) { return outcome }
            throw error
        } catch let error as S3Error where error.status == 0 && upload.createdHere {
            // The store cannot be reached (an abort would not get through either): the
            // parts stored so far stay for the next publish of these bytes to resume.
            throw S3Error(operation: error.operation, key: error.key, status: error.status, code: error.code,
                          message: error.message + "; the parts uploaded so far stay in the store, and the next publish of these bytes resumes the upload",
                          bucket: error.bucket, endpoint: error.endpoint)
        } catch {
            if upload.createdHere { await abandon(key, uploadID: upload.id) }
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
            "POST", key: objectKey, query: [("uploads", "")], headers: objects.objectHeaders(metadata) + algorithm, operation: "CreateMultipartUpload")
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
            let response = try await client.send(
                "PUT", key: objectKey, query: [("partNumber", String(index + 1)), ("uploadId", upload.id)],
                headers: sendsChecksums ? [(parts.algorithm.header, checksum.base64)] : [],
                body: .file(path: path, offset: offset, length: length, sent: { sent.partSent(index, upTo: $0) }),
                payloadSHA256: payload, operation: operation)
            guard response.status == 200, let etag = response.headers["etag"] else {
                throw client.error(response, operation: operation, key: objectKey)
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
            _ = try await prover.prove(key, size: metadata.size, sha256: metadata.sha256, localFile: nil, parts: parts, trustStored: !resumed)
        } catch let error as StorageError {
            await objects.removeUnproven(key)
            throw error
        }
    }

    /// Aborts an upload this run started, while the failure that matters more is reported
    /// (or once the key turned out to be stored by another run). When the abort fails too,
    /// its parts stay in the store, billed, and nothing else points at them: the user is
    /// told which upload it is and how to remove it.
    func abandon(_ key: String, uploadID: String) async {
        do {
            try await pending.abort(key: key, uploadID: uploadID)
        } catch {
            objects.log("could not abort the multipart upload of \(objects.shown(key)) (upload id \(uploadID)): \(error); its parts stay in the store, billed, until `modelcast prune --abort-uploads-older-than DURATION` removes them")
        }
    }
}
