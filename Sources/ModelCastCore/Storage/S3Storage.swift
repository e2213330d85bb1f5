import Foundation

/// An S3 bucket (AWS, Cloudflare R2, MinIO, any S3-compatible store) as a publish target.
///
/// Every object carries its SHA-256 as user metadata (`x-amz-meta-sha256`, hex, for
/// other tools and reports) and as an S3 checksum the store verifies and keeps
/// (`x-amz-checksum-sha256` for single PUTs, per part for multipart uploads, giving a
/// composite; none of it with `--checksum none`). Only the store's checksum, or the
/// bytes downloaded and hashed, prove what a key holds (`proveContent`); the metadata
/// never does. A multipart upload a killed run left behind is resumed when its parts are
/// proven to be the local bytes (`S3PendingUploads.resumable`). Artifacts are written
/// with `If-None-Match: *` (single PUTs and CompleteMultipartUpload alike) and never
/// overwritten; the manifest is replaced with `If-Match` on the ETag it had when the
/// publish started, so concurrent publishers cannot silently overwrite each other.
package final class S3Storage: Storage, Sendable {
    package let location: String

    let target: S3Location

    let client: S3Client

    let policy: S3UploadPolicy

    let staging: String

    /// HEAD, the conditional DELETE of what this store created, the headers objects carry.
    let objects: S3Objects

    /// The keys and their sizes.
    let listing: S3Listing

    /// What a key holds, proven by the store's checksum or the bytes.
    let prover: S3ContentProver

    /// New objects, whole or in parts (`uploader.multipart`).
    let uploader: S3Uploader

    /// Multipart uploads a killed run left: listed, aborted, resumed.
    let pending: S3PendingUploads

    /// `progress` is told of each object upload (`uploading KEY`, its size) as its bytes go
    /// out; `log` receives notes for the user (a multipart upload resumed, an upload or
    /// object a failed upload could not remove).
    package init(target: S3Location, endpoint: S3Endpoint, credentials: AWSCredentials, policy: S3UploadPolicy = S3UploadPolicy(), retries: Int = 4,
                progress: ProgressFactory? = nil, log: @escaping @Sendable (String) -> Void = { _ in }) throws {
        try policy.validate()
        self.target = target
        self.location = target.description
        self.policy = policy
        let client = S3Client(endpoint: endpoint, bucket: target.bucket, credentials: credentials, retries: retries,
                              sendsChecksums: policy.checksum.sendsChecksums)
        self.client = client
        let objects = S3Objects(client: client, target: target, policy: policy, created: ETagTable(), log: log)
        let prover = S3ContentProver(objects: objects)
        let pending = S3PendingUploads(client: client, target: target, policy: policy)
        self.objects = objects
        self.listing = S3Listing(client: client, target: target)
        self.prover = prover
        self.pending = pending
        self.uploader = S3Uploader(
            objects: objects, prover: prover,
            multipart: S3MultipartUploader(objects: objects, prover: prover, pending: pending, progress: progress),
            progress: progress)
        var template = Array((NSTemporaryDirectory() as NSString).appendingPathComponent("modelcast-s3-staging-XXXXXX").utf8CString)
        guard mkdtemp(&template) != nil else {
            throw ModelCastError.io(operation: "create staging directory", path: NSTemporaryDirectory(), reason: errnoDescription())
        }
        staging = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        Interrupts.shared.registerDirectory(staging)
    }

    // Best effort, here and in `shutdown`: every upload consumed its staged copy, so what is
    // left is an empty private directory under the system's temporary directory.
    deinit { try? FileManager.default.removeItem(atPath: staging) }

    /// Closes the HTTP client; call when done.
    package func shutdown() async {
        await client.shutdown()
        try? FileManager.default.removeItem(atPath: staging)
    }

    /// An object store stages in a private temporary directory; its writers run at the same
    /// time (conditional writes keep them apart), it uploads plain files in place and in
    /// parts, and it holds connections open.
    package var capabilities: StorageCapabilities {
        StorageCapabilities(
            staging: StagingSpace(directory: { [staging] in staging }),
            lock: nil, hosting: nil,
            multipart: MultipartUploads(
                plan: { [policy] in policy.partPlan(forObjectOf: $0) },
                abandoned: { [pending] date in try await pending.list().filter { $0.initiated <= date } },
                abort: { [pending] upload in try await pending.abort(key: upload.key, uploadID: upload.uploadID) }),
            uploadsInPlace: true,
            requestCounts: { [client] in client.requestCounts },
            close: { [self] in await shutdown() },
            listSizes: { [listing] prefix in try await listing.sizes(prefix: prefix) })
    }

    package func head(_ key: String) async throws -> ObjectInfo? {
        try await objects.head(key)
    }

    package func read(_ key: String, range: ClosedRange<Int64>) async throws -> Data {
        try validateKey(key)
        guard range.count <= RangedRead.maximum else { throw StorageError.tooLarge(key: key, size: Int64(range.count), limit: RangedRead.maximum) }
        let objectKey = target.objectKey(key)
        let response = try await client.send("GET", key: objectKey, headers: [("Range", "bytes=\(range.lowerBound)-\(range.upperBound)")],
                                             operation: "GET", responseLimit: range.count + 1)
        if response.status == 404, S3Client.errorCode(response.body) != "NoSuchBucket" { throw StorageError.missing(key) }
        // 416: the range starts past the end (nothing there); 206 or a whole 200 otherwise.
        if response.status == 416 { return Data() }
        guard response.status == 206 || response.status == 200 else { throw client.error(response, operation: "GET", key: objectKey) }
        if response.status == 200 {
            // A store that ignores Range sends the whole object: keep the range asked for.
            let body = response.body
            guard range.lowerBound < Int64(body.count) else { return Data() }
            return body.subdata(in: Int(range.lowerBound)..<min(body.count, Int(range.upperBound) + 1))
        }
        return response.body
    }

    package func getWithInfo(_ key: String, limit: Int) async throws -> (data: Data, info: ObjectInfo)? {
        try validateKey(key)
        let objectKey = target.objectKey(key)
        let response: S3Response
        do {
            response = try await client.send("GET", key: objectKey, operation: "GET", responseLimit: limit)
        } catch let error as S3ResponseTooLarge {
            throw StorageError.tooLarge(key: key, size: error.size, limit: limit)
        }
        // A missing bucket is no missing object: nothing of the target can be read or written.
        if response.status == 404, S3Client.errorCode(response.body) != "NoSuchBucket" { return nil }
        guard response.status == 200 else { throw client.error(response, operation: "GET", key: objectKey) }
        return (response.body, ObjectInfo(size: Int64(response.body.count), contentType: response.headers["content-type"],
                                          cacheControl: response.headers["cache-control"], etag: response.headers["etag"]))
    }

    package func list(prefix: String) async throws -> [String] {
        try await listing.sizes(prefix: prefix).keys.sorted()
    }

    package func putIfAbsent(_ key: String, _ body: PutBody) async throws -> PutOutcome {
        switch body {
        case .staged(let staged): return try await uploader.putStaged(key, staged)
        case .bytes(let data, let metadata): return try await uploader.putBytes(key, data, metadata)
        }
    }

    package func replace(_ key: String, data: Data, metadata: ObjectMetadata, ifMatch: String?) async throws {
        try validateKey(key)
        let objectKey = target.objectKey(key)
        var headers = objects.objectHeaders(metadata) + objects.checksumHeaders(metadata)
        if let ifMatch { headers.append(ifMatch.isEmpty ? ("If-None-Match", "*") : ("If-Match", ifMatch)) }
        let response = try await client.send("PUT", key: objectKey, headers: headers, body: .data(data), payloadSHA256: metadata.sha256.hex, operation: "PUT")
        if response.status == 412 {
            let current = try await objects.head(key)?.etag ?? "none"
            throw StorageError.preconditionFailed(key: key, expected: ifMatch?.isEmpty == false ? ifMatch! : "none", actual: current)
        }
        guard response.status == 200 else { throw client.error(response, operation: "PUT", key: objectKey) }
    }

    /// Deletes `key`; one this store created only while it still holds what was stored
    /// (see `S3Objects.delete`).
    package func delete(_ key: String) async throws {
        try await objects.delete(key)
    }

    /// Proves the bytes under `key` (see `S3ContentProver.prove`).
    package func proveContent(_ key: String, size: Int64, sha256: SHA256Digest, localFile: String?, trustStored: Bool) async throws -> ContentProof {
        try await prover.prove(key, size: size, sha256: sha256, localFile: localFile, parts: nil, trustStored: trustStored)
    }

    /// Multipart uploads in progress under the target prefix (ListMultipartUploads).
    package func pendingUploads() async throws -> [PendingUpload] {
        try await pending.list()
    }
}
