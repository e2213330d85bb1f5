import Foundation
import NIOConcurrencyHelpers

/// Multipart settings for large objects.
public struct S3UploadPolicy: Sendable {
    /// Objects larger than this go through multipart upload (S3 needs it above 5 GiB).
    public var multipartThreshold: Int64 = 64 << 20
    /// Part size: every part but the last has exactly this size (R2 requires equal parts).
    public var partSize: Int64 = 16 << 20
    /// Parts uploaded at once.
    public var concurrentParts = 16
    /// Whether objects carry an S3 SHA-256 checksum the store checks and keeps.
    public var checksum = S3ChecksumMode.sha256

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

/// Whether requests carry S3's SHA-256 checksums (`--checksum`).
public enum S3ChecksumMode: String, Sendable, CaseIterable {
    /// `x-amz-checksum-sha256` on every upload (each part's, for a multipart upload), which
    /// the store checks against the bytes and keeps; HEADs ask for the stored checksum
    /// (`x-amz-checksum-mode`), which proves an object without downloading it.
    case sha256
    /// No `x-amz-checksum-*` header at all, for stores that refuse them (Backblaze B2
    /// answers 400). Uploads are still signed with their SHA-256 as the payload hash and
    /// carry `x-amz-meta-sha256`; an existing object is proven by downloading and hashing
    /// it; an interrupted multipart upload is not resumed (nothing proves its parts).
    case none
}

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
public final class S3Storage: Storage, Sendable {
    public let location: String
    let target: S3Location
    let client: S3Client
    let policy: S3UploadPolicy
    private let staging: String
    /// The ETag of every object this store created (a conditional write that succeeded),
    /// so that `delete` removes it only while it still holds what was stored.
    private let createdETags = ETagTable()
    /// Reports each object upload; nil reports nothing.
    private let progress: ProgressFactory?
    /// Notes for the user (a resumed upload).
    private let log: @Sendable (String) -> Void

    /// `progress` is told of each object upload (`uploading KEY`, its size) as its bytes go
    /// out; `log` receives notes for the user (a multipart upload resumed).
    public init(target: S3Location, endpoint: S3Endpoint, credentials: AWSCredentials, policy: S3UploadPolicy = S3UploadPolicy(), retries: Int = 4,
                progress: ProgressFactory? = nil, log: @escaping @Sendable (String) -> Void = { _ in }) throws {
        try policy.validate()
        self.target = target
        self.location = target.description
        self.policy = policy
        self.progress = progress
        self.log = log
        self.client = S3Client(endpoint: endpoint, bucket: target.bucket, credentials: credentials, retries: retries,
                               sendsChecksums: policy.checksum == .sha256)
        var template = Array((NSTemporaryDirectory() as NSString).appendingPathComponent("modelcast-s3-staging-XXXXXX").utf8CString)
        guard mkdtemp(&template) != nil else {
            throw ModelCastError.io(operation: "create staging directory", path: NSTemporaryDirectory(), reason: errnoDescription())
        }
        staging = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        Interrupts.shared.registerDirectory(staging)
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

    /// `x-amz-checksum-mode: ENABLED` (the stored checksum in the answer), unless checksums are off.
    private var checksumModeHeaders: [(String, String)] {
        policy.checksum == .sha256 ? [("x-amz-checksum-mode", "ENABLED")] : []
    }

    public func head(_ key: String) async throws -> ObjectInfo? {
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
                          cacheControl: response.headers["cache-control"], etag: response.headers["etag"])
    }

    /// Proves the bytes under `key` by the store's own SHA-256 checksum where it gives a
    /// usable one, else by downloading and hashing them (or, with `trustStored`, by size).
    /// `x-amz-meta-sha256` is never proof: anyone who can write the key can set it.
    public func proveContent(_ key: String, size: Int64, sha256: SHA256Digest, localFile: String?, trustStored: Bool) async throws -> ContentProof {
        try await proveContent(key, size: size, sha256: sha256, localFile: localFile, parts: nil, trustStored: trustStored)
    }

    /// `proveContent`, with the digests of the local bytes' parts where they are known
    /// (hashed with `sha256`), so a composite checksum of that part size is compared
    /// without reading `localFile`.
    private func proveContent(_ key: String, size: Int64, sha256: SHA256Digest, localFile: String?, parts known: PartDigests?,
                              trustStored: Bool) async throws -> ContentProof {
        try validateKey(key)
        let objectKey = target.objectKey(key)
        let response = try await client.send("HEAD", key: objectKey, headers: checksumModeHeaders, operation: "HEAD")
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
            if localFile != nil || known != nil,
               let matches = try await compositeMatches(objectKey, digest, parts: parts, localFile: localFile, known: known, size: size, sha256: sha256) {
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

    /// Compares a composite checksum with the one the local bytes give for the object's
    /// part size (part 1's length, from `HEAD ?partNumber=1`): from `known` when it has
    /// that part size (hashed in the read that gave `sha256`), else from `localFile`, which
    /// counts only if it holds exactly `size` bytes with SHA-256 `sha256` (checked in the
    /// same read). So a match proves the stored bytes are those. nil: the comparison
    /// cannot be made (no part information, another part count, a local file with other bytes).
    private func compositeMatches(_ objectKey: String, _ composite: SHA256Digest, parts: Int?, localFile: String?, known: PartDigests?,
                                  size: Int64, sha256: SHA256Digest) async throws -> Bool? {
        let response = try await client.send("HEAD", key: objectKey, query: [("partNumber", "1")], operation: "HEAD part 1")
        guard response.status == 200 || response.status == 206,
              let partSize = Int64(response.headers["content-length"] ?? ""), partSize > 0 else { return nil }
        let count = (size + partSize - 1) / partSize
        let storedCount = response.headers["x-amz-mp-parts-count"].flatMap(Int.init) ?? parts
        if let storedCount, Int64(storedCount) != count { return nil }
        if let known, known.fit(size: size, partSize: partSize) {
            return try known.composite() == composite
        }
        guard let localFile, let local = try? StreamDigester.digestFile(at: localFile, partSize: partSize),
              local.size == size, local.sha256 == sha256, let localParts = local.parts, localParts.fit(size: size, partSize: partSize) else { return nil }
        return try localParts.composite() == composite
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
        try await getWithETag(key, limit: limit)?.data
    }

    public func read(_ key: String, range: ClosedRange<Int64>) async throws -> Data {
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

    public func getWithETag(_ key: String, limit: Int) async throws -> (data: Data, etag: String)? {
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
        return (response.body, response.headers["etag"] ?? "")
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
                Interrupts.shared.unregisterTemporary(staged.path)
            }
        }
        try validateKey(key)
        // Uploading the user's own file in place: its bytes must still be the ones
        // hashed for `metadata`. A store that does not check part checksums would
        // accept changed bytes in a multipart upload.
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

    /// Objects over the threshold (or over S3's single-PUT limit) go up in parts.
    private func isMultipart(_ size: Int64) -> Bool {
        size > policy.multipartThreshold || size > S3UploadPolicy.singlePutLimit
    }

    /// The policy's part size, grown (in whole MiB) where it would take more than S3's 10,000 parts.
    func partSize(forObjectOf size: Int64) -> Int64 {
        let partSize = policy.partSize
        guard (size + partSize - 1) / partSize > S3UploadPolicy.maximumParts else { return partSize }
        let mib: Int64 = 1 << 20
        return ((size + S3UploadPolicy.maximumParts - 1) / S3UploadPolicy.maximumParts + mib - 1) / mib * mib
    }

    public func uploadPartSize(forObjectOf size: Int64) -> Int64? {
        isMultipart(size) ? partSize(forObjectOf: size) : nil
    }

    private func upload(_ key: String, staged: StagedObject, hashed: FileSnapshot?) async throws -> PutOutcome {
        let size = staged.metadata.size
        let partSize = uploadPartSize(forObjectOf: size)
        // The parts' digests, when the pass that hashed the artifact made them for this part size.
        let known = partSize.flatMap { partSize in staged.parts.flatMap { $0.fit(size: size, partSize: partSize) ? $0 : nil } }
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

    /// The parts' digests of a staged file that came without them (a tree file, a zip that
    /// crossed the threshold), hashed in one read that also proves the file still holds
    /// the bytes `metadata` names.
    private func hashParts(_ staged: StagedObject, partSize: Int64) throws -> PartDigests {
        let digest = try StreamDigester.digestFile(at: staged.path, partSize: partSize)
        guard digest.size == staged.metadata.size, digest.sha256 == staged.metadata.sha256, let parts = digest.parts else {
            throw ModelCastError.io(
                operation: "upload", path: staged.path,
                reason: "the file changed after it was hashed (now \(digest.size) bytes, sha256 \(digest.sha256.hex); hashed \(staged.metadata.size) bytes, sha256 \(staged.metadata.sha256.hex)); run again once nothing writes to it")
        }
        return parts
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

    /// The SHA-256 checksum of a single PUT's body (none with `--checksum none`). S3
    /// checks it against the bytes and keeps it (returned by a HEAD with checksum mode);
    /// `x-amz-sdk-checksum-algorithm` names it, which some S3-compatible stores (moto)
    /// need to keep it.
    private func checksumHeaders(_ metadata: ObjectMetadata) -> [(String, String)] {
        guard policy.checksum == .sha256 else { return [] }
        return [("x-amz-sdk-checksum-algorithm", "SHA256"), ("x-amz-checksum-sha256", metadata.sha256.base64)]
    }

    /// An existing object is `.unchanged` only when its bytes are proven to be these
    /// (the store's checksum, or downloaded and hashed; never the metadata it carries);
    /// other bytes are a conflict. nil: there is no object under `key`. `parts`: the local
    /// bytes' part digests, where known.
    private func compare(_ key: String, metadata: ObjectMetadata, localFile: String?, parts: PartDigests? = nil) async throws -> PutOutcome? {
        do {
            _ = try await proveContent(key, size: metadata.size, sha256: metadata.sha256, localFile: localFile, parts: parts, trustStored: false)
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

    /// A multipart upload under way: its id, the ETag of each part stored so far (by
    /// index), and whether this run created it (only then may this run abort it).
    private struct MultipartUpload {
        let id: String
        let stored: [Int: String]
        let createdHere: Bool
    }

    /// Equal-size parts, uploaded concurrently (bounded) and each retried. Each part
    /// carries the SHA-256 hashed with the artifact (`parts`: its checksum, and the
    /// signed payload hash), so the store checks that the bytes it receives are the
    /// bytes hashed, and the file is read once here, to send it. A multipart upload of
    /// the key a killed run left behind is resumed when its parts are proven to be these
    /// bytes (`resumableUpload`); only the missing parts are sent. An upload this run
    /// started is aborted when it fails, so no half-made object or stray parts stay
    /// behind, except when the store could not be reached: then its parts stay for the
    /// next publish to resume (`prune --abort-uploads-older-than` removes them otherwise).
    private func multipartUpload(_ key: String, staged: StagedObject, parts: PartDigests, hashed: FileSnapshot?) async throws -> PutOutcome {
        let objectKey = target.objectKey(key)
        let size = staged.metadata.size
        let count = parts.digests.count
        let reporter = progress?("uploading \(key)", size)
        defer { reporter?.finish() }
        let sent = UploadProgress(reporter, parts: count)
        let upload: MultipartUpload
        if let resumed = try await resumableUpload(key, path: staged.path, size: size, parts: parts) {
            upload = resumed
            log("resuming the interrupted upload of \(location)/\(key): \(resumed.stored.count) of \(count) parts are stored already")
            for index in resumed.stored.keys { sent.partSent(index, upTo: parts.range(ofPart: index, size: size).length) }
        } else {
            upload = MultipartUpload(id: try await createUpload(objectKey, metadata: staged.metadata), stored: [:], createdHere: true)
        }
        do {
            let etags = try await uploadParts(objectKey, path: staged.path, size: size, parts: parts, upload: upload, sent: sent)
            // The parts' checksums were computed when the file was hashed. S3 refuses a part
            // whose bytes differ from its checksum; for a store that does not, an unchanged
            // file is what proves the parts are the bytes hashed.
            try checkUnchanged(staged.path, since: hashed)
            let completion = try await complete(objectKey, uploadID: upload.id, parts: parts, etags: etags)
            createdETags.set(key, XMLFields.first("ETag", in: completion.body) ?? completion.headers["etag"])
            try await checkComposite(key, completion: completion, metadata: staged.metadata, parts: parts, resumed: !upload.createdHere)
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
    private struct CompletionRefused: Error {
        let response: S3Response
    }

    /// Starts a multipart upload of `objectKey` with the object's headers (and its parts'
    /// checksum algorithm); returns its id.
    private func createUpload(_ objectKey: String, metadata: ObjectMetadata) async throws -> String {
        let algorithm: [(String, String)] = policy.checksum == .sha256 ? [("x-amz-checksum-algorithm", "SHA256")] : []
        let create = try await client.send(
            "POST", key: objectKey, query: [("uploads", "")], headers: objectHeaders(metadata) + algorithm, operation: "CreateMultipartUpload")
        guard create.status == 200, let uploadID = XMLFields.first("UploadId", in: create.body) else {
            throw client.error(create, operation: "CreateMultipartUpload", key: objectKey)
        }
        return uploadID
    }

    /// Uploads the parts `upload` does not hold yet, `policy.concurrentParts` at a time,
    /// each streamed from the file; returns every part's ETag, in order.
    private func uploadParts(_ objectKey: String, path: String, size: Int64, parts: PartDigests, upload: MultipartUpload,
                             sent: UploadProgress) async throws -> [String] {
        let etags = ResultBox<String>(count: parts.digests.count)
        for (index, etag) in upload.stored { etags.set(index, .success(etag)) }
        let missing = parts.digests.indices.filter { upload.stored[$0] == nil }
        let checksums = policy.checksum == .sha256
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = 0
            func start() {
                guard next < missing.count else { return }
                let index = missing[next]
                next += 1
                let (offset, length) = parts.range(ofPart: index, size: size)
                let digest = parts.digests[index]
                group.addTask {
                    let operation = "UploadPart \(index + 1)"
                    let response = try await self.client.send(
                        "PUT", key: objectKey, query: [("partNumber", String(index + 1)), ("uploadId", upload.id)],
                        headers: checksums ? [("x-amz-checksum-sha256", digest.base64)] : [],
                        body: .file(path: path, offset: offset, length: length, sent: { sent.partSent(index, upTo: $0) }),
                        payloadSHA256: digest.hex, operation: operation)
                    guard response.status == 200, let etag = response.headers["etag"] else {
                        throw self.client.error(response, operation: operation, key: objectKey)
                    }
                    etags.set(index, .success(etag))
                }
            }
            for _ in 0..<policy.concurrentParts { start() }
            while try await group.next() != nil { start() }
        }
        return try etags.values.map { try $0!.get() }
    }

    /// CompleteMultipartUpload, only if the key is still absent (as a single PUT is
    /// stored): another publisher may have stored it while the parts went up.
    private func complete(_ objectKey: String, uploadID: String, parts: PartDigests, etags: [String]) async throws -> S3Response {
        var xml = "<CompleteMultipartUpload>"
        for (index, etag) in etags.enumerated() {
            let checksum = policy.checksum == .sha256 ? "<ChecksumSHA256>\(parts.digests[index].base64)</ChecksumSHA256>" : ""
            xml += "<Part><PartNumber>\(index + 1)</PartNumber><ETag>\(XMLFields.escape(etag))</ETag>\(checksum)</Part>"
        }
        xml += "</CompleteMultipartUpload>"
        let response = try await client.send(
            "POST", key: objectKey, query: [("uploadId", uploadID)], headers: [("Content-Type", "application/xml"), ("If-None-Match", "*")],
            body: .data(Data(xml.utf8)), operation: "CompleteMultipartUpload", errorIn200: true)
        if response.status == 412 { throw CompletionRefused(response: response) }
        // S3 can answer 200 with an error document for CompleteMultipartUpload.
        guard response.status == 200, XMLFields.first("Code", in: response.body) == nil else {
            throw client.error(response, operation: "CompleteMultipartUpload", key: objectKey)
        }
        return response
    }

    /// The completed object must be the bytes hashed: its composite SHA-256 checksum (in
    /// the completion's answer, else from a HEAD) must be the one `parts` give. S3 already
    /// refuses parts whose bytes differ from their checksums; this covers stores that do
    /// not check them and the parts a resumed upload kept. A resumed upload on a store
    /// that reports no checksum is downloaded and hashed. Other bytes: the object, which
    /// this run created, is removed and the upload fails naming the key.
    private func checkComposite(_ key: String, completion: S3Response, metadata: ObjectMetadata, parts: PartDigests, resumed: Bool) async throws {
        guard policy.checksum == .sha256 else { return }
        do {
            if let answered = XMLFields.first("ChecksumSHA256", in: completion.body) {
                let digest = answered.split(separator: "-").first.map(String.init) ?? answered
                guard digest == (try parts.composite()).base64 else {
                    throw StorageError.contentMismatch(
                        key: key, expectedSize: metadata.size, expectedSHA256: metadata.sha256.hex, actualSize: metadata.size, actualSHA256: nil,
                        detail: "the store's composite checksum \(answered) is not the one of the parts hashed")
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
    private func abandon(_ objectKey: String, uploadID: String) async {
        _ = try? await client.send("DELETE", key: objectKey, query: [("uploadId", uploadID)], operation: "AbortMultipartUpload")
    }

    /// A multipart upload of `key` that a killed run left behind and this run can finish:
    /// created with SHA-256 part checksums, holding at least one part, and every part it
    /// holds proven to be the local bytes of that part: its size, and the part's SHA-256
    /// checksum as the store lists it or, where the store lists none (moto), its ETag equal
    /// to the MD5 of the local bytes (the composite SHA-256 is checked once the upload
    /// completes either way). Of several, the one holding the most parts. nil with
    /// `--checksum none` (nothing would prove the parts), or when none qualifies. Uploads
    /// not resumed are left alone, never aborted: they may be another run's, still going
    /// (`prune --abort-uploads-older-than` removes stale ones).
    private func resumableUpload(_ key: String, path: String, size: Int64, parts: PartDigests) async throws -> MultipartUpload? {
        guard policy.checksum == .sha256 else { return nil }
        let candidates = try await listUploads().filter {
            $0.upload.key == key && ($0.checksumAlgorithm.map { $0.uppercased() == "SHA256" } ?? true)
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

    /// The parts `upload` holds (ListParts), by index with their ETags; nil when one of
    /// them is not proven to be the local bytes of that part, or the upload is gone.
    private func provenParts(_ upload: PendingUpload, path: String, size: Int64, parts: PartDigests, md5s: inout [Int: String]) async throws -> [Int: String]? {
        let objectKey = target.objectKey(upload.key)
        var stored: [Int: String] = [:]
        var marker: String?
        repeat {
            var query = [("uploadId", upload.uploadID)]
            if let marker { query.append(("part-number-marker", marker)) }
            let response = try await client.send("GET", key: objectKey, query: query, operation: "ListParts")
            if response.status == 404 { return nil }
            guard response.status == 200 else { throw client.error(response, operation: "ListParts", key: objectKey) }
            if let algorithm = XMLFields.first("ChecksumAlgorithm", in: response.body), algorithm.uppercased() != "SHA256" { return nil }
            for block in XMLFields.blocks("Part", in: response.body) {
                guard let number = XMLFields.first("PartNumber", in: block).flatMap(Int.init), number >= 1, number <= parts.digests.count,
                      let storedSize = XMLFields.first("Size", in: block).flatMap(Int64.init),
                      let etag = XMLFields.first("ETag", in: block) else { return nil }
                let index = number - 1
                let (offset, length) = parts.range(ofPart: index, size: size)
                guard storedSize == length else { return nil }
                if let checksum = XMLFields.first("ChecksumSHA256", in: block) {
                    guard checksum == parts.digests[index].base64 else { return nil }
                } else {
                    let md5 = try md5s[index] ?? Self.md5(path: path, offset: offset, length: length)
                    md5s[index] = md5
                    guard etag.replacingOccurrences(of: "\"", with: "").lowercased() == md5 else { return nil }
                }
                stored[index] = etag
            }
            marker = XMLFields.first("IsTruncated", in: response.body) == "true" ? XMLFields.first("NextPartNumberMarker", in: response.body) : nil
        } while marker != nil
        return stored
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
        try await listUploads().map(\.upload)
    }

    /// Multipart uploads in progress under the target prefix, with the checksum
    /// algorithm each was created with, where the store lists it.
    private func listUploads() async throws -> [(upload: PendingUpload, checksumAlgorithm: String?)] {
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
    public func abortUpload(key: String, uploadID: String) async throws {
        let objectKey = target.objectKey(key)
        let response = try await client.send("DELETE", key: objectKey, query: [("uploadId", uploadID)], operation: "AbortMultipartUpload")
        guard response.status == 204 || response.status == 200 || response.status == 404 else {
            throw client.error(response, operation: "AbortMultipartUpload", key: objectKey)
        }
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
        guard let reporter else { return }
        let added = counted.withLockedValue { counted -> Int64 in
            let added = max(0, bytes - counted[index])
            counted[index] += added
            return added
        }
        if added > 0 { reporter.advance(by: Int(added)) }
    }
}
