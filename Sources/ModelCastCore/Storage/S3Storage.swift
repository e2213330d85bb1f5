import Foundation
import NIOConcurrencyHelpers

/// An S3 bucket (AWS, Cloudflare R2, MinIO, any S3-compatible store) as a publish target.
///
/// Every object carries its SHA-256 as user metadata (`x-amz-meta-sha256`, hex, for
/// other tools and reports) and as an S3 checksum the store verifies and keeps
/// (`x-amz-checksum-sha256` for single PUTs, per part for multipart uploads, giving a
/// composite; none of it with `--checksum none`). Only the store's checksum, or the
/// bytes downloaded and hashed, prove what a key holds (`proveContent`); the metadata
/// never does. A multipart upload a killed run left behind is resumed when its parts are
/// proven to be the local bytes (`resumableUpload`). Artifacts are written
/// with `If-None-Match: *` (single PUTs and CompleteMultipartUpload alike) and never
/// overwritten; the manifest is replaced with `If-Match` on the ETag it had when the
/// publish started, so concurrent publishers cannot silently overwrite each other.
package final class S3Storage: Storage, Sendable {
    package let location: String

    let target: S3Location

    let client: S3Client

    let policy: S3UploadPolicy

    let staging: String

    /// The ETag of every object this store created (a conditional write that succeeded),
    /// so that `delete` removes it only while it still holds what was stored.
    let createdETags = ETagTable()

    /// Reports each object upload; nil reports nothing.
    let progress: ProgressFactory?

    /// Notes for the user (a resumed upload).
    let log: @Sendable (String) -> Void

    /// `progress` is told of each object upload (`uploading KEY`, its size) as its bytes go
    /// out; `log` receives notes for the user (a multipart upload resumed).
    package init(target: S3Location, endpoint: S3Endpoint, credentials: AWSCredentials, policy: S3UploadPolicy = S3UploadPolicy(), retries: Int = 4,
                progress: ProgressFactory? = nil, log: @escaping @Sendable (String) -> Void = { _ in }) throws {
        try policy.validate()
        self.target = target
        self.location = target.description
        self.policy = policy
        self.progress = progress
        self.log = log
        self.client = S3Client(endpoint: endpoint, bucket: target.bucket, credentials: credentials, retries: retries,
                               sendsChecksums: policy.checksum.sendsChecksums)
        var template = Array((NSTemporaryDirectory() as NSString).appendingPathComponent("modelcast-s3-staging-XXXXXX").utf8CString)
        guard mkdtemp(&template) != nil else {
            throw ModelCastError.io(operation: "create staging directory", path: NSTemporaryDirectory(), reason: errnoDescription())
        }
        staging = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        Interrupts.shared.registerDirectory(staging)
    }

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
            lock: nil, hostingRoot: nil,
            multipart: MultipartUploads(
                partSize: { [self] in uploadPartSize(forObjectOf: $0) },
                abandoned: { [self] date in try await pendingUploads().filter { $0.initiated <= date } },
                abort: { [self] upload in try await abortUpload(key: upload.key, uploadID: upload.uploadID) }),
            uploadsInPlace: true,
            requestCounts: { [client] in client.requestCounts },
            close: { [self] in await shutdown() },
            listSizes: { [self] prefix in try await sizes(prefix: prefix) })
    }

    package func stagingDirectory() throws -> String { staging }

    /// `x-amz-checksum-mode: ENABLED` (the stored checksum in the answer), unless checksums are off.
    var checksumModeHeaders: [(String, String)] {
        policy.checksum.sendsChecksums ? [("x-amz-checksum-mode", "ENABLED")] : []
    }

    package func head(_ key: String) async throws -> ObjectInfo? {
        try validateKey(key)
        let objectKey = target.objectKey(key)
        let response = try await client.send("HEAD", key: objectKey, headers: checksumModeHeaders, operation: "HEAD")
        if response.status == 404 { return nil }
        guard response.status == 200 else { throw client.error(response, operation: "HEAD", key: objectKey) }
        let size = Int64(response.headers["content-length"] ?? "") ?? 0
        // Only a SHA-256 the store computed over the whole object is reported: the
        // x-amz-meta-sha256 metadata is what a writer claims, and a composite checksum
        // is not the object's SHA-256 (proveContent handles both).
        var digest: SHA256Digest?
        if case .fullObject(let sha, _) = StoreChecksum(response.headers) { digest = sha }
        return ObjectInfo(size: size, sha256: digest, contentType: response.headers["content-type"],
                          cacheControl: response.headers["cache-control"], etag: response.headers["etag"],
                          contentEncoding: response.headers["content-encoding"])
    }

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
        try await sizes(prefix: prefix).keys.sorted()
    }

    /// Every key under `prefix` with its size, from the listing (a thousand a request).
    func sizes(prefix: String) async throws -> [String: Int64] {
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

    let listWithoutPrefix = LockedFlag()

    func listObjects(queryPrefix: String?, keep: String) async throws -> [String: Int64] {
        var keys: [String: Int64] = [:]
        var token: String?
        repeat {
            var query = [("list-type", "2")]
            if let queryPrefix, !queryPrefix.isEmpty { query.append(("prefix", queryPrefix)) }
            if let token { query.append(("continuation-token", token)) }
            let response = try await client.send("GET", key: nil, query: query, operation: "LIST")
            guard response.status == 200 else { throw client.error(response, operation: "LIST", key: keep) }
            for block in XMLFields.blocks("Contents", in: response.body) {
                guard let key = XMLFields.first("Key", in: block), key.hasPrefix(keep) else { continue }
                keys[target.prefix.isEmpty ? key : String(key.dropFirst(target.prefix.count + 1))] = XMLFields.first("Size", in: block).flatMap { Int64($0) } ?? -1
            }
            token = XMLFields.first("IsTruncated", in: response.body) == "true" ? XMLFields.first("NextContinuationToken", in: response.body) : nil
        } while token != nil
        return keys
    }

    package func putIfAbsent(_ key: String, _ body: PutBody) async throws -> PutOutcome {
        switch body {
        case .staged(let staged): return try await putStaged(key, staged)
        case .bytes(let data, let metadata): return try await putBytes(key, data, metadata)
        }
    }

    func putStaged(_ key: String, _ staged: StagedObject) async throws -> PutOutcome {
        defer {
            if staged.isTemporary {
                unlink(staged.path)
                Interrupts.shared.unregisterTemporary(staged.path)
            }
        }
        try validateKey(key)
        // Uploading the user's own file in place: its bytes must still be the ones
        // hashed for `metadata`. A store that does not check part checksums would
        // accept changed bytes in a multipart upload.
        let hashed = try staged.isTemporary ? nil : (staged.source ?? FileSnapshot.current(staged.path))
        let size = staged.metadata.size
        let outcome = size <= Self.sentWithoutAsking && !isMultipart(size)
            ? try await putWithoutAsking(key, staged: staged, hashed: hashed)
            : try await upload(key, staged: staged, hashed: hashed)
        try checkUnchanged(staged.path, since: hashed)
        // A multipart upload is proven by its object checksum (full-object CRC or composite
        // SHA-256, `checkObjectChecksum`); without checksums, by a HEAD.
        if outcome == .created, isMultipart(size), !policy.checksum.sendsChecksums {
            try await confirmCreated(key, metadata: staged.metadata, answer: nil)
        }
        return outcome
    }

    /// Objects up to this size are sent without asking first whether the key exists. Where
    /// it does not (the usual case: a new blob, a new record) that saves a round trip; where
    /// it does, the conditional PUT is refused and the stored object proven as before, and
    /// sending a few MiB for nothing costs about what the question would have. Larger
    /// objects are asked about first (`upload`), so a re-run never sends them again.
    static let sentWithoutAsking: Int64 = 16 << 20

    /// One conditional PUT of a small staged file (see `sentWithoutAsking`). Its upload is
    /// reported once stored: until the answer, the bytes may be going to a key that holds
    /// them already (an unchanged object reports nothing).
    func putWithoutAsking(_ key: String, staged: StagedObject, hashed: FileSnapshot?) async throws -> PutOutcome {
        try checkUnchanged(staged.path, since: hashed)
        let size = staged.metadata.size
        let outcome = try await put(key, body: .file(path: staged.path, offset: 0, length: size), metadata: staged.metadata,
                                    localFile: staged.path, condition: ("If-None-Match", "*"))
        if outcome == .created, let reporter = progress?("uploading \(key)", size) {
            reporter.advance(by: Int(size))
            reporter.finish()
        }
        return outcome
    }

    /// A record or other small bytes: one conditional PUT (a key that exists is compared).
    func putBytes(_ key: String, _ data: Data, _ metadata: ObjectMetadata) async throws -> PutOutcome {
        try validateKey(key)
        return try await put(key, body: .data(data), metadata: metadata, localFile: nil, condition: ("If-None-Match", "*"))
    }

    /// A single conditional PUT: `.created` only when it succeeds and what it stored is
    /// proven (`confirmCreated`). 412 means the key exists: compare it. `localFile`: the
    /// body's bytes on disk, if any.
    func put(_ key: String, body: S3Body, metadata: ObjectMetadata, localFile: String?, condition: (String, String)) async throws -> PutOutcome {
        let objectKey = target.objectKey(key)
        let response = try await client.send(
            "PUT", key: objectKey, headers: objectHeaders(metadata) + [condition] + checksumHeaders(metadata),
            body: body, payloadSHA256: metadata.sha256.hex, operation: "PUT")
        switch response.status {
        case 200:
            createdETags.set(key, response.headers["etag"])
            try await confirmCreated(key, metadata: metadata, answer: response)
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

    /// Proves what this run just created before it counts as `.created`: by the PUT's
    /// answer (`answer`), when it echoes the SHA-256 checksum sent (S3 computes that over
    /// the bytes it received and refuses them on a difference), else by a HEAD: the size,
    /// the store's whole-object checksum where it reports one, Cache-Control and
    /// Content-Type (with `--checksum none`, as on Backblaze B2, always the HEAD). An
    /// object not proven (found wrong, or the HEAD failed) is removed, since the caller
    /// never learns this run created it (`delete` checks its ETag), and the error reported.
    func confirmCreated(_ key: String, metadata: ObjectMetadata, answer: S3Response?) async throws {
        // An object sent whole carries its SHA-256 in every mode but `none`.
        if policy.checksum.sendsChecksums, let answer, case .fullObject(let digest, _) = StoreChecksum(answer.headers), digest == metadata.sha256 {
            return
        }
        do {
            guard let info = try await head(key) else {
                throw ModelCastError.io(operation: "check stored object", path: "\(location)/\(key)", reason: "missing after upload")
            }
            if let problem = info.difference(from: metadata) {
                throw ModelCastError.io(operation: "check stored object", path: "\(location)/\(key)", reason: problem)
            }
        } catch {
            try? await delete(key)  // best effort: the failure is what must be reported
            throw error
        }
    }

    /// The SHA-256 checksum of a single PUT's body (none with `--checksum none`). S3
    /// checks it against the bytes and keeps it (returned by a HEAD with checksum mode);
    /// `x-amz-sdk-checksum-algorithm` names it, which some S3-compatible stores (moto)
    /// need to keep it.
    func checksumHeaders(_ metadata: ObjectMetadata) -> [(String, String)] {
        guard policy.checksum.sendsChecksums else { return [] }
        return [("x-amz-sdk-checksum-algorithm", "SHA256"), ("x-amz-checksum-sha256", metadata.sha256.base64)]
    }

    /// An existing object is `.unchanged` only when its bytes are proven to be these
    /// (the store's checksum, or downloaded and hashed; never the metadata it carries);
    /// other bytes are a conflict. nil: there is no object under `key`. `parts`: the local
    /// bytes' part digests, where known.
    func compare(_ key: String, metadata: ObjectMetadata, localFile: String?, parts: PartDigests? = nil) async throws -> PutOutcome? {
        do {
            _ = try await proveContent(key, size: metadata.size, sha256: metadata.sha256, localFile: localFile, parts: parts, trustStored: false)
            return .unchanged
        } catch StorageError.missing {
            return nil
        } catch StorageError.contentMismatch(_, _, _, let actualSize, let actualSHA256, _) {
            throw StorageError.conflict(key: key, existingSize: actualSize, newSize: metadata.size, existingSHA256: actualSHA256, newSHA256: metadata.sha256.hex)
        }
    }

    func objectHeaders(_ metadata: ObjectMetadata) -> [(String, String)] {
        [("Cache-Control", metadata.cacheControl), ("Content-Type", metadata.contentType), ("x-amz-meta-sha256", metadata.sha256.hex)]
    }

    package func replace(_ key: String, data: Data, metadata: ObjectMetadata, ifMatch: String?) async throws {
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
    package func delete(_ key: String) async throws {
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

    static func unquoted(_ etag: String) -> String {
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

/// An upload's progress for a `ProgressReporter`: each part's bytes counted once, however
/// often the part is sent (a retried part starts again from its first byte).
final class UploadProgress: Sendable {
    private let reporter: (any ProgressReporter)?
    /// Bytes of each part counted so far.
    private let counted: NIOLockedValueBox<[Int64]>

    init(_ reporter: (any ProgressReporter)?, parts: Int) {
        self.reporter = reporter
        counted = NIOLockedValueBox(Array(repeating: 0, count: reporter == nil ? 0 : parts))
    }

    /// The first `bytes` bytes of part `index` have been sent.
    func partSent(_ index: Int, upTo bytes: Int64) {
        let added = count(index, upTo: bytes)
        if added > 0 { reporter?.advance(by: Int(added)) }
    }

    /// Part `index` (`bytes` long) was stored by an earlier run: done, but not sent now.
    func partStoredBefore(_ index: Int, bytes: Int64) {
        let added = count(index, upTo: bytes)
        if added > 0 { reporter?.alreadyDone(Int(added)) }
    }

    private func count(_ index: Int, upTo bytes: Int64) -> Int64 {
        guard reporter != nil else { return 0 }
        return counted.withLockedValue { counted -> Int64 in
            let added = max(0, bytes - counted[index])
            counted[index] += added
            return added
        }
    }
}
