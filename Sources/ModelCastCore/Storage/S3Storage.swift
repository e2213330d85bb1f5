import Foundation

/// Multipart settings for large objects.
public struct S3UploadPolicy: Sendable {
    /// Objects larger than this go through multipart upload (S3 needs it above 5 GiB).
    public var multipartThreshold: Int64 = 64 << 20
    /// Part size: every part but the last has exactly this size (R2 requires equal parts).
    public var partSize: Int64 = 16 << 20
    /// Parts uploaded at once.
    public var concurrentParts = 8

    public static let singlePutLimit: Int64 = 5 << 30
    public static let minimumPartSize: Int64 = 5 << 20
    public static let maximumParts: Int64 = 10_000

    public init() {}

    /// Checks the numbers against S3's limits.
    public func validate() throws {
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

/// An S3 bucket (AWS, Cloudflare R2, MinIO, any S3-compatible store) as a publish target.
///
/// Every object carries its SHA-256 as user metadata (`x-amz-meta-sha256`, hex) and
/// as `x-amz-checksum-sha256` for single PUTs, so a HEAD tells whether a key holds
/// exactly the bytes being published. Artifacts are written with `If-None-Match: *`
/// and never overwritten; the manifest is replaced with `If-Match` on the ETag it
/// had when the publish started, so concurrent publishers cannot silently overwrite
/// each other.
public final class S3Storage: Storage, @unchecked Sendable {
    public let location: String
    let target: S3Location
    let client: S3Client
    let policy: S3UploadPolicy
    private let staging: String

    public init(target: S3Location, endpoint: S3Endpoint, credentials: AWSCredentials, policy: S3UploadPolicy = S3UploadPolicy(), retries: Int = 4) throws {
        try policy.validate()
        self.target = target
        self.location = target.description
        self.policy = policy
        self.client = S3Client(endpoint: endpoint, bucket: target.bucket, credentials: credentials, retries: retries)
        var template = Array((NSTemporaryDirectory() as NSString).appendingPathComponent("modelcast-s3-staging-XXXXXX").utf8CString)
        guard mkdtemp(&template) != nil else {
            throw ModelCastError.io(operation: "create staging directory", path: NSTemporaryDirectory(), reason: errnoDescription())
        }
        staging = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit { try? FileManager.default.removeItem(atPath: staging) }

    /// Closes the HTTP client; call when done.
    public func shutdown() async {
        await client.shutdown()
        try? FileManager.default.removeItem(atPath: staging)
    }

    /// Requests sent so far, by HTTP method.
    public var requestCounts: [String: Int]? { client.requestCounts }

    public func stagingDirectory() throws -> String { staging }

    public func head(_ key: String) async throws -> ObjectInfo? {
        try validateKey(key)
        let objectKey = target.objectKey(key)
        let response = try await client.send("HEAD", key: objectKey, headers: [("x-amz-checksum-mode", "ENABLED")], operation: "HEAD")
        if response.status == 404 { return nil }
        guard response.status == 200 else { throw client.error(response, operation: "HEAD", key: objectKey) }
        let size = Int64(response.headers["content-length"] ?? "") ?? 0
        var digest = response.headers["x-amz-meta-sha256"].flatMap(SHA256Digest.init(hex:))
        if digest == nil, let checksum = response.headers["x-amz-checksum-sha256"], !checksum.contains("-"),
           let raw = Data(base64Encoded: checksum) {
            digest = SHA256Digest(bytes: Array(raw))
        }
        return ObjectInfo(size: size, sha256: digest, contentType: response.headers["content-type"],
                          cacheControl: response.headers["cache-control"], etag: response.headers["etag"])
    }

    public func proveContent(_ key: String, size: Int64, sha256: SHA256Digest, localFile: String?, trustStored: Bool) async throws -> ContentProof {
        guard let info = try await head(key) else { throw StorageError.missing(key) }  // STUB: size and metadata only
        guard info.size == size, info.sha256 == nil || info.sha256 == sha256 else {
            throw StorageError.contentMismatch(key: key, expectedSize: size, expectedSHA256: sha256.hex, actualSize: info.size, actualSHA256: info.sha256?.hex, detail: "")
        }
        return .storeChecksum
    }

    public func get(_ key: String, limit: Int) async throws -> Data? {
        try validateKey(key)
        let objectKey = target.objectKey(key)
        let response: S3Response
        do {
            response = try await client.send("GET", key: objectKey, operation: "GET", responseLimit: limit)
        } catch let error as S3ResponseTooLarge {
            throw StorageError.tooLarge(key: key, size: error.size, limit: limit)
        }
        if response.status == 404 { return nil }
        guard response.status == 200 else { throw client.error(response, operation: "GET", key: objectKey) }
        return response.body
    }

    public func list(prefix: String) async throws -> [String] {
        let fullPrefix = target.objectKey(prefix)
        if !listWithoutPrefix.value {
            do {
                return try await listObjects(queryPrefix: fullPrefix, keep: fullPrefix)
            } catch let error as S3Error where error.code == "SignatureDoesNotMatch" && fullPrefix.contains("/") {
                // Some S3-compatible servers (moto among them) check signatures against the
                // decoded query, so a "/" in `prefix` never verifies. List without the
                // prefix and filter here instead; AWS itself never takes this path.
                listWithoutPrefix.value = true
            }
        }
        return try await listObjects(queryPrefix: nil, keep: fullPrefix)
    }

    private let listWithoutPrefix = LockedFlag()

    private func listObjects(queryPrefix: String?, keep: String) async throws -> [String] {
        var keys: [String] = []
        var token: String?
        repeat {
            var query = [("list-type", "2")]
            if let queryPrefix, !queryPrefix.isEmpty { query.append(("prefix", queryPrefix)) }
            if let token { query.append(("continuation-token", token)) }
            let response = try await client.send("GET", key: nil, query: query, operation: "LIST")
            guard response.status == 200 else { throw client.error(response, operation: "LIST", key: keep) }
            for block in XMLFields.blocks("Contents", in: response.body) {
                guard let key = XMLFields.first("Key", in: block), key.hasPrefix(keep) else { continue }
                keys.append(target.prefix.isEmpty ? key : String(key.dropFirst(target.prefix.count + 1)))
            }
            token = XMLFields.first("IsTruncated", in: response.body) == "true" ? XMLFields.first("NextContinuationToken", in: response.body) : nil
        } while token != nil
        return keys.sorted()
    }

    public func putIfAbsent(_ key: String, staged: StagedObject) async throws -> PutOutcome {
        defer {
            if staged.isTemporary {
                unlink(staged.path)
                TemporaryFiles.shared.unregister(staged.path)
            }
        }
        try validateKey(key)
        // Uploading the user's own file in place: its bytes must still be the ones
        // hashed for `metadata`. Multipart part checksums are computed from what is
        // on disk at upload time, so S3 itself would accept changed bytes there.
        let hashed = try staged.isTemporary ? nil : (staged.source ?? FileSnapshot.current(staged.path))
        let outcome = try await upload(key, staged: staged, hashed: hashed)
        try checkUnchanged(staged.path, since: hashed)
        return outcome
    }

    /// Fails, naming the file and what changed, if the file at `path` is no longer
    /// the one in `hashed` (nil: a temporary copy, nothing to check).
    private func checkUnchanged(_ path: String, since hashed: FileSnapshot?) throws {
        guard let hashed else { return }
        let now = try FileSnapshot.current(path)
        guard now == hashed else {
            throw ModelCastError.io(
                operation: "upload", path: path,
                reason: "the file changed after it was hashed (\(now.changes(since: hashed))), so it may no longer hold the bytes whose SHA-256 is being published; run again once nothing writes to it")
        }
    }

    private func upload(_ key: String, staged: StagedObject, hashed: FileSnapshot?) async throws -> PutOutcome {
        // HEAD first: re-publishing unchanged content uploads nothing.
        if let existing = try await head(key) {
            return try compare(existing, key: key, metadata: staged.metadata)
        }
        try checkUnchanged(staged.path, since: hashed)
        let size = staged.metadata.size
        if size > policy.multipartThreshold || size > S3UploadPolicy.singlePutLimit {
            return try await multipartUpload(key, staged: staged, hashed: hashed)
        }
        return try await put(key, body: .file(path: staged.path, offset: 0, length: size), metadata: staged.metadata, condition: ("If-None-Match", "*"))
    }

    public func putIfAbsent(_ key: String, data: Data, metadata: ObjectMetadata) async throws -> PutOutcome {
        try validateKey(key)
        if let existing = try await head(key) {
            return try compare(existing, key: key, metadata: metadata)
        }
        return try await put(key, body: .data(data), metadata: metadata, condition: ("If-None-Match", "*"))
    }

    /// A single conditional PUT. 412 means the key appeared meanwhile: compare it.
    private func put(_ key: String, body: S3Body, metadata: ObjectMetadata, condition: (String, String)) async throws -> PutOutcome {
        let objectKey = target.objectKey(key)
        let response = try await client.send(
            "PUT", key: objectKey, headers: objectHeaders(metadata) + [condition, ("x-amz-checksum-sha256", metadata.sha256.base64)],
            body: body, payloadSHA256: metadata.sha256.hex, operation: "PUT")
        switch response.status {
        case 200: return .created
        case 412:
            guard let existing = try await head(key) else {
                throw client.error(response, operation: "PUT", key: objectKey)
            }
            return try compare(existing, key: key, metadata: metadata)
        default:
            throw client.error(response, operation: "PUT", key: objectKey)
        }
    }

    private func compare(_ existing: ObjectInfo, key: String, metadata: ObjectMetadata) throws -> PutOutcome {
        guard existing.size == metadata.size, let sha = existing.sha256, sha == metadata.sha256 else {
            throw StorageError.conflict(key: key, existingSize: existing.size, newSize: metadata.size,
                                        existingSHA256: existing.sha256?.hex, newSHA256: metadata.sha256.hex)
        }
        return .unchanged
    }

    private func objectHeaders(_ metadata: ObjectMetadata) -> [(String, String)] {
        [("Cache-Control", metadata.cacheControl), ("Content-Type", metadata.contentType), ("x-amz-meta-sha256", metadata.sha256.hex)]
    }

    /// Equal-size parts, uploaded concurrently (bounded), each retried; the upload is
    /// aborted on failure so no half-made object or stray parts stay behind.
    private func multipartUpload(_ key: String, staged: StagedObject, hashed: FileSnapshot?) async throws -> PutOutcome {
        let objectKey = target.objectKey(key)
        let size = staged.metadata.size
        var partSize = policy.partSize
        if (size + partSize - 1) / partSize > S3UploadPolicy.maximumParts {
            let mib: Int64 = 1 << 20
            partSize = ((size + S3UploadPolicy.maximumParts - 1) / S3UploadPolicy.maximumParts + mib - 1) / mib * mib
        }
        let create = try await client.send(
            "POST", key: objectKey, query: [("uploads", "")], headers: objectHeaders(staged.metadata) + [("x-amz-checksum-algorithm", "SHA256")],
            operation: "CreateMultipartUpload")
        guard create.status == 200, let uploadID = XMLFields.first("UploadId", in: create.body) else {
            throw client.error(create, operation: "CreateMultipartUpload", key: objectKey)
        }
        do {
            let count = Int((size + partSize - 1) / partSize)
            let parts = ResultBox<(String, String)>(count: count)
            try await withThrowingTaskGroup(of: Void.self) { group in
                var next = 0
                func start() {
                    guard next < count else { return }
                    let number = next + 1
                    let offset = Int64(next) * partSize
                    let length = min(partSize, size - offset)
                    next += 1
                    group.addTask {
                        let digest = try await Self.digest(path: staged.path, offset: offset, length: length)
                        let response = try await self.client.send(
                            "PUT", key: objectKey, query: [("partNumber", String(number)), ("uploadId", uploadID)],
                            headers: [("x-amz-checksum-sha256", digest.base64)],
                            body: .file(path: staged.path, offset: offset, length: length), payloadSHA256: digest.hex,
                            operation: "UploadPart \(number)")
                        guard response.status == 200, let etag = response.headers["etag"] else {
                            throw self.client.error(response, operation: "UploadPart \(number)", key: objectKey)
                        }
                        parts.set(number - 1, .success((etag, digest.base64)))
                    }
                }
                for _ in 0..<policy.concurrentParts { start() }
                while try await group.next() != nil { start() }
            }
            var xml = "<CompleteMultipartUpload>"
            for (index, part) in parts.values.enumerated() {
                let (etag, checksum) = try part!.get()
                xml += "<Part><PartNumber>\(index + 1)</PartNumber><ETag>\(XMLFields.escape(etag))</ETag><ChecksumSHA256>\(checksum)</ChecksumSHA256></Part>"
            }
            xml += "</CompleteMultipartUpload>"
            // Each part's checksum was computed from the file as it was then: only an
            // unchanged file proves the parts add up to the bytes that were hashed.
            try checkUnchanged(staged.path, since: hashed)
            let complete = try await client.send(
                "POST", key: objectKey, query: [("uploadId", uploadID)], headers: [("Content-Type", "application/xml")],
                body: .data(Data(xml.utf8)), operation: "CompleteMultipartUpload", errorIn200: true)
            // S3 can answer 200 with an error document for CompleteMultipartUpload.
            guard complete.status == 200, XMLFields.first("Code", in: complete.body) == nil else {
                throw client.error(complete, operation: "CompleteMultipartUpload", key: objectKey)
            }
            return .created
        } catch {
            _ = try? await client.send("DELETE", key: objectKey, query: [("uploadId", uploadID)], operation: "AbortMultipartUpload")
            throw error
        }
    }

    /// A multipart upload begun and never completed or aborted (a publish killed mid-upload).
    public struct PendingUpload: Sendable, Equatable {
        /// The key relative to the target root.
        public let key: String
        public let uploadID: String
        public let initiated: Date
    }

    /// Multipart uploads in progress under the target prefix (ListMultipartUploads).
    public func pendingUploads() async throws -> [PendingUpload] {
        let fullPrefix = target.objectKey("")
        var uploads: [PendingUpload] = []
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
                uploads.append(PendingUpload(key: String(key.dropFirst(fullPrefix.count)), uploadID: uploadID, initiated: initiated))
            }
            markers = nil
            if XMLFields.first("IsTruncated", in: response.body) == "true",
               let key = XMLFields.first("NextKeyMarker", in: response.body), let upload = XMLFields.first("NextUploadIdMarker", in: response.body) {
                markers = (key, upload)
            }
        } while markers != nil
        return uploads.sorted { ($0.key, $0.uploadID) < ($1.key, $1.uploadID) }
    }

    /// Aborts a multipart upload, freeing the parts the store keeps (and bills) for it.
    public func abortUpload(key: String, uploadID: String) async throws {
        let objectKey = target.objectKey(key)
        let response = try await client.send("DELETE", key: objectKey, query: [("uploadId", uploadID)], operation: "AbortMultipartUpload")
        guard response.status == 204 || response.status == 200 || response.status == 404 else {
            throw client.error(response, operation: "AbortMultipartUpload", key: objectKey)
        }
    }

    /// SHA-256 of a byte range of a file (each part's checksum).
    static func digest(path: String, offset: Int64, length: Int64) async throws -> SHA256Digest {
        let file = try FileDescriptor.openForReading(path)
        let hasher = try SHA256Hasher()
        var position = offset
        let end = offset + length
        while position < end {
            let bytes = try file.read(at: position, count: Int(min(4 << 20, end - position)))
            guard !bytes.isEmpty else { throw ModelCastError.changedWhilePacking(path: path, expected: end, actual: position) }
            hasher.update(bytes)
            position += Int64(bytes.count)
        }
        return hasher.finalize()
    }

    public func replace(_ key: String, data: Data, metadata: ObjectMetadata, ifMatch: String?) async throws {
        try validateKey(key)
        let objectKey = target.objectKey(key)
        var headers = objectHeaders(metadata) + [("x-amz-checksum-sha256", metadata.sha256.base64)]
        if let ifMatch { headers.append(ifMatch.isEmpty ? ("If-None-Match", "*") : ("If-Match", ifMatch)) }
        let response = try await client.send("PUT", key: objectKey, headers: headers, body: .data(data), payloadSHA256: metadata.sha256.hex, operation: "PUT")
        if response.status == 412 {
            let current = try await head(key)?.etag ?? "none"
            throw StorageError.preconditionFailed(key: key, expected: ifMatch?.isEmpty == false ? ifMatch! : "none", actual: current)
        }
        guard response.status == 200 else { throw client.error(response, operation: "PUT", key: objectKey) }
    }

    public func delete(_ key: String) async throws {
        try validateKey(key)
        let objectKey = target.objectKey(key)
        let response = try await client.send("DELETE", key: objectKey, operation: "DELETE")
        guard response.status == 204 || response.status == 200 || response.status == 404 else {
            throw client.error(response, operation: "DELETE", key: objectKey)
        }
    }
}

/// A Boolean shared between tasks.
final class LockedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var flag = false

    var value: Bool {
        get { lock.lock(); defer { lock.unlock() }; return flag }
        set { lock.lock(); flag = newValue; lock.unlock() }
    }
}
