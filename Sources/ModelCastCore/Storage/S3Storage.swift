import Foundation
import NIOConcurrencyHelpers

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
/// Every object carries its SHA-256 as user metadata (`x-amz-meta-sha256`, hex, for
/// other tools and reports) and as an S3 checksum the store verifies and keeps
/// (`x-amz-checksum-sha256` for single PUTs, per part for multipart uploads, giving a
/// composite). Only the store's checksum, or the bytes downloaded and hashed, prove
/// what a key holds (`proveContent`); the metadata never does. Artifacts are written
/// with `If-None-Match: *` (single PUTs and CompleteMultipartUpload alike) and never
/// overwritten; the manifest is replaced with `If-Match` on the ETag it had when the
/// publish started, so concurrent publishers cannot silently overwrite each other.
public final class S3Storage: Storage, @unchecked Sendable {
    public let location: String
    let target: S3Location
    let client: S3Client
    let policy: S3UploadPolicy
    private let staging: String
    /// The ETag of every object this store created (a conditional write that succeeded),
    /// so that `delete` removes it only while it still holds what was stored.
    private let createdETags = ETagTable()

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
        // Only a SHA-256 the store computed over the whole object is reported: the
        // x-amz-meta-sha256 metadata is what a writer claims, and a composite checksum
        // is not the object's SHA-256 (proveContent handles both).
        var digest: SHA256Digest?
        if case .fullObject(let sha, _) = StoreChecksum(response.headers) { digest = sha }
        return ObjectInfo(size: size, sha256: digest, contentType: response.headers["content-type"],
                          cacheControl: response.headers["cache-control"], etag: response.headers["etag"])
    }

    /// Proves the bytes under `key` by the store's own SHA-256 checksum where it gives a
    /// usable one, else by downloading and hashing them (or, with `trustStored`, by size).
    /// `x-amz-meta-sha256` is never proof: anyone who can write the key can set it.
    public func proveContent(_ key: String, size: Int64, sha256: SHA256Digest, localFile: String?, trustStored: Bool) async throws -> ContentProof {
        try validateKey(key)
        let objectKey = target.objectKey(key)
        let response = try await client.send("HEAD", key: objectKey, headers: [("x-amz-checksum-mode", "ENABLED")], operation: "HEAD")
        if response.status == 404 { throw StorageError.missing(key) }
        guard response.status == 200 else { throw client.error(response, operation: "HEAD", key: objectKey) }
        func mismatch(_ actualSize: Int64, _ actualSHA256: SHA256Digest?, _ detail: String) -> StorageError {
            .contentMismatch(key: key, expectedSize: size, expectedSHA256: sha256.hex, actualSize: actualSize, actualSHA256: actualSHA256?.hex, detail: detail)
        }
        let storedSize = Int64(response.headers["content-length"] ?? "") ?? -1
        guard storedSize == size else { throw mismatch(storedSize, nil, "size the store reports") }

        /// The store's checksum disagrees without settling it: the bytes are downloaded whatever `trustStored` says.
        var checksumDiffers = false
        switch StoreChecksum(response.headers) {
        case .fullObject(let digest, let declared):
            if digest == sha256 { return .storeChecksum }
            // Declared a full-object checksum: other bytes. Otherwise it may be a composite
            // the store did not mark as one: only the bytes themselves can tell.
            if declared { throw mismatch(size, digest, "the store's SHA-256 checksum of the object") }
            checksumDiffers = true
        case .composite(let digest, let parts):
            if let localFile, let matches = try await compositeMatches(objectKey, digest, parts: parts, localFile: localFile, size: size, sha256: sha256) {
                if matches { return .storeChecksum }
                // Other bytes, or the same bytes in parts of other sizes than part 1's:
                // only the bytes themselves can tell.
                checksumDiffers = true
            }
        case .none:
            break
        }
        if trustStored && !checksumDiffers { return .trustedSize }
        return try await downloadAndHash(key, objectKey: objectKey, size: size, sha256: sha256)
    }

    /// The SHA-256 checksum S3 keeps for an object, as a HEAD with checksum mode reports it.
    enum StoreChecksum: Equatable {
        /// Of the whole object; `declared` when the store said so (`x-amz-checksum-type: FULL_OBJECT`).
        case fullObject(SHA256Digest, declared: Bool)
        /// Of the concatenated SHA-256s of its parts (a multipart upload); `parts` when known.
        case composite(SHA256Digest, parts: Int?)
        /// None, or none in a form this can use.
        case none

        init(_ headers: [String: String]) {
            guard var value = headers["x-amz-checksum-sha256"]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else {
                self = .none
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

    /// Compares a composite checksum with the one `localFile` gives for the object's
    /// part size (part 1's length, from `HEAD ?partNumber=1`). The local file counts
    /// only if it holds exactly `size` bytes with SHA-256 `sha256` (checked in the same
    /// read), so a match proves the stored bytes are those. nil: the comparison cannot
    /// be made (no part information, another part count, a local file with other bytes).
    private func compositeMatches(_ objectKey: String, _ composite: SHA256Digest, parts: Int?, localFile: String, size: Int64, sha256: SHA256Digest) async throws -> Bool? {
        let response = try await client.send("HEAD", key: objectKey, query: [("partNumber", "1")], operation: "HEAD part 1")
        guard response.status == 200 || response.status == 206,
              let partSize = Int64(response.headers["content-length"] ?? ""), partSize > 0 else { return nil }
        let count = (size + partSize - 1) / partSize
        let storedCount = response.headers["x-amz-mp-parts-count"].flatMap(Int.init) ?? parts
        if let storedCount, Int64(storedCount) != count { return nil }
        guard let local = try? FileHashes.read(localFile, followLinks: true, partSize: partSize),
              local.size == size, local.sha256 == sha256, Int64(local.parts.count) == count else { return nil }
        let concatenated = local.parts.flatMap(\.bytes)
        return try SHA256Hasher.digest(concatenated) == composite
    }

    /// Downloads the object and hashes it as it streams in (flat memory).
    private func downloadAndHash(_ key: String, objectKey: String, size: Int64, sha256: SHA256Digest) async throws -> ContentProof {
        final class Tally {
            var hasher: SHA256Hasher
            var count: Int64 = 0
            init() throws { hasher = try SHA256Hasher() }
        }
        var tally = try Tally()
        let response = try await client.download(
            key: objectKey, operation: "GET", expectedLength: size,
            restart: { tally = try Tally() },
            consume: { buffer in
                buffer.withUnsafeReadableBytes { tally.hasher.update($0) }
                tally.count += Int64(buffer.readableBytes)
            })
        if response.status == 404 { throw StorageError.missing(key) }
        guard response.status == 200 else { throw client.error(response, operation: "GET", key: objectKey) }
        let digest = tally.hasher.finalize()
        guard tally.count == size, digest == sha256 else {
            throw StorageError.contentMismatch(key: key, expectedSize: size, expectedSHA256: sha256.hex, actualSize: tally.count, actualSHA256: digest.hex,
                                               detail: "downloaded and hashed")
        }
        return .hashed
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
        // Existing content first: re-publishing proven-identical content uploads nothing.
        if let outcome = try await compare(key, metadata: staged.metadata, localFile: staged.path) {
            return outcome
        }
        try checkUnchanged(staged.path, since: hashed)
        let size = staged.metadata.size
        if size > policy.multipartThreshold || size > S3UploadPolicy.singlePutLimit {
            return try await multipartUpload(key, staged: staged, hashed: hashed)
        }
        return try await put(key, body: .file(path: staged.path, offset: 0, length: size), metadata: staged.metadata, localFile: staged.path,
                             condition: ("If-None-Match", "*"))
    }

    public func putIfAbsent(_ key: String, data: Data, metadata: ObjectMetadata) async throws -> PutOutcome {
        try validateKey(key)
        if let outcome = try await compare(key, metadata: metadata, localFile: nil) {
            return outcome
        }
        return try await put(key, body: .data(data), metadata: metadata, localFile: nil, condition: ("If-None-Match", "*"))
    }

    /// A single conditional PUT: `.created` only when it succeeds. 412 means the key
    /// appeared meanwhile: compare it. `localFile`: the body's bytes on disk, if any.
    private func put(_ key: String, body: S3Body, metadata: ObjectMetadata, localFile: String?, condition: (String, String)) async throws -> PutOutcome {
        let objectKey = target.objectKey(key)
        let response = try await client.send(
            "PUT", key: objectKey, headers: objectHeaders(metadata) + [condition] + checksumHeaders(metadata),
            body: body, payloadSHA256: metadata.sha256.hex, operation: "PUT")
        switch response.status {
        case 200:
            createdETags.set(key, response.headers["etag"])
            return .created
        case 412:
            guard let outcome = try await compare(key, metadata: metadata, localFile: localFile) else {
                throw client.error(response, operation: "PUT", key: objectKey)
            }
            return outcome
        default:
            throw client.error(response, operation: "PUT", key: objectKey)
        }
    }

    /// The SHA-256 checksum of a single PUT's body. S3 checks it against the bytes and
    /// keeps it (returned by a HEAD with checksum mode); `x-amz-sdk-checksum-algorithm`
    /// names it, which some S3-compatible stores (moto) need to keep it.
    private func checksumHeaders(_ metadata: ObjectMetadata) -> [(String, String)] {
        [("x-amz-sdk-checksum-algorithm", "SHA256"), ("x-amz-checksum-sha256", metadata.sha256.base64)]
    }

    /// An existing object is `.unchanged` only when its bytes are proven to be these
    /// (the store's checksum, or downloaded and hashed; never the metadata it carries);
    /// other bytes are a conflict. nil: there is no object under `key`.
    private func compare(_ key: String, metadata: ObjectMetadata, localFile: String?) async throws -> PutOutcome? {
        do {
            _ = try await proveContent(key, size: metadata.size, sha256: metadata.sha256, localFile: localFile, trustStored: false)
            return .unchanged
        } catch StorageError.missing {
            return nil
        } catch StorageError.contentMismatch(_, _, _, let actualSize, let actualSHA256, _) {
            throw StorageError.conflict(key: key, existingSize: actualSize, newSize: metadata.size, existingSHA256: actualSHA256, newSHA256: metadata.sha256.hex)
        }
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
            // Completed only if the key is still absent, as a single PUT is stored: another
            // publisher may have stored it while the parts went up.
            let complete = try await client.send(
                "POST", key: objectKey, query: [("uploadId", uploadID)], headers: [("Content-Type", "application/xml"), ("If-None-Match", "*")],
                body: .data(Data(xml.utf8)), operation: "CompleteMultipartUpload", errorIn200: true)
            if complete.status == 412 { throw CompletionRefused(response: complete) }
            // S3 can answer 200 with an error document for CompleteMultipartUpload.
            guard complete.status == 200, XMLFields.first("Code", in: complete.body) == nil else {
                throw client.error(complete, operation: "CompleteMultipartUpload", key: objectKey)
            }
            createdETags.set(key, XMLFields.first("ETag", in: complete.body) ?? complete.headers["etag"])
            return .created
        } catch let refused as CompletionRefused {
            // The key exists: this run did not create it. Free the parts, then compare.
            _ = try? await client.send("DELETE", key: objectKey, query: [("uploadId", uploadID)], operation: "AbortMultipartUpload")
            guard let outcome = try await compare(key, metadata: staged.metadata, localFile: staged.path) else {
                throw client.error(refused.response, operation: "CompleteMultipartUpload", key: objectKey)
            }
            return outcome
        } catch {
            _ = try? await client.send("DELETE", key: objectKey, query: [("uploadId", uploadID)], operation: "AbortMultipartUpload")
            throw error
        }
    }

    /// CompleteMultipartUpload answered 412: the key exists.
    private struct CompletionRefused: Error {
        let response: S3Response
    }

    public var uploadsInPlace: Bool { true }

    public func abandonedUploads(startedBefore date: Date) async throws -> [PendingUpload] {
        try await pendingUploads().filter { $0.initiated <= date }
    }

    public func abortUpload(_ upload: PendingUpload) async throws {
        try await abortUpload(key: upload.key, uploadID: upload.uploadID)
    }

    public func close() async { await shutdown() }

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
        var headers = objectHeaders(metadata) + checksumHeaders(metadata)
        if let ifMatch { headers.append(ifMatch.isEmpty ? ("If-None-Match", "*") : ("If-Match", ifMatch)) }
        let response = try await client.send("PUT", key: objectKey, headers: headers, body: .data(data), payloadSHA256: metadata.sha256.hex, operation: "PUT")
        if response.status == 412 {
            let current = try await head(key)?.etag ?? "none"
            throw StorageError.preconditionFailed(key: key, expected: ifMatch?.isEmpty == false ? ifMatch! : "none", actual: current)
        }
        guard response.status == 200 else { throw client.error(response, operation: "PUT", key: objectKey) }
    }

    /// Deletes `key`. A key this store created is deleted only while it still holds the
    /// object stored (`If-Match` on its ETag): once another writer has replaced it, it is
    /// theirs and stays (a run deletes only what it created).
    public func delete(_ key: String) async throws {
        try validateKey(key)
        let objectKey = target.objectKey(key)
        var headers: [(String, String)] = []
        let created = createdETags.get(key)
        if let created { headers.append(("If-Match", created)) }
        var response = try await client.send("DELETE", key: objectKey, headers: headers, operation: "DELETE")
        if let created, response.status == 501 || (response.status == 400 && S3Client.errorCode(response.body) == "NotImplemented") {
            // A store without conditional deletes: compare the ETag first (not atomic, but
            // a replacement made before this point is still left alone).
            let current = try await head(key)?.etag
            guard current.map(Self.unquoted) == Self.unquoted(created) else { return }
            response = try await client.send("DELETE", key: objectKey, operation: "DELETE")
        }
        if response.status == 412 { return }  // replaced by another writer: not ours to delete
        guard response.status == 204 || response.status == 200 || response.status == 404 else {
            throw client.error(response, operation: "DELETE", key: objectKey)
        }
        if created != nil { createdETags.set(key, nil) }
    }

    private static func unquoted(_ etag: String) -> String {
        etag.replacingOccurrences(of: "\"", with: "")
    }
}

/// ETags by key, shared between tasks.
final class ETagTable: Sendable {
    private let etags = NIOLockedValueBox<[String: String]>([:])

    func get(_ key: String) -> String? {
        etags.withLockedValue { $0[key] }
    }

    /// Records `etag` for `key` (nil, or an empty ETag: forgets it).
    func set(_ key: String, _ etag: String?) {
        etags.withLockedValue { $0[key] = etag?.isEmpty == false ? etag : nil }
    }
}

/// A Boolean shared between tasks.
final class LockedFlag: Sendable {
    private let flag = NIOLockedValueBox(false)

    var value: Bool {
        get { flag.withLockedValue { $0 } }
        set { flag.withLockedValue { $0 = newValue } }
    }
}
