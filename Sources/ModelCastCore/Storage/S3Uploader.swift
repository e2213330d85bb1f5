import Foundation

/// How an S3 target stores a new object: one conditional PUT (`If-None-Match: *`), or
/// parts (`S3MultipartUploader`) for a large one, never overwriting what a key holds and
/// never counting an object `.created` before what was stored is proven.
struct S3Uploader: Sendable {
    let objects: S3Objects
    let prover: S3ContentProver
    let multipart: S3MultipartUploader
    /// Reports each object upload; nil reports nothing.
    let progress: ProgressFactory?

    var client: S3Client { objects.client }
    var policy: S3UploadPolicy { objects.policy }

    /// Objects up to this size are sent without asking first whether the key exists. Where
    /// it does not (the usual case: a new blob, a new record) that saves a round trip; where
    /// it does, the conditional PUT is refused and the stored object proven as before, and
    /// sending a few MiB for nothing costs about what the question would have. Larger
    /// objects are asked about first (`upload`), so a re-run never sends them again.
    static let sentWithoutAsking: Int64 = 16 << 20

    /// Stores a staged file under `key` (consuming a temporary copy).
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
        let outcome = size <= Self.sentWithoutAsking && !policy.isMultipart(size)
            ? try await putWithoutAsking(key, staged: staged, hashed: hashed)
            : try await upload(key, staged: staged, hashed: hashed)
        try Self.checkUnchanged(staged.path, since: hashed)
        // A multipart upload is proven by its object checksum (full-object CRC or composite
        // SHA-256, `checkObjectChecksum`); without checksums, by a HEAD.
        if outcome == .created, policy.isMultipart(size), !policy.checksum.sendsChecksums {
            try await confirmCreated(key, metadata: staged.metadata, answer: nil)
        }
        return outcome
    }

    /// One conditional PUT of a small staged file (see `sentWithoutAsking`). Its upload is
    /// reported once stored: until the answer, the bytes may be going to a key that holds
    /// them already (an unchanged object reports nothing).
    func putWithoutAsking(_ key: String, staged: StagedObject, hashed: FileSnapshot?) async throws -> PutOutcome {
        try Self.checkUnchanged(staged.path, since: hashed)
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

    /// A larger staged file: the key is asked about first (re-publishing proven-identical
    /// content uploads nothing), then one conditional PUT or parts.
    func upload(_ key: String, staged: StagedObject, hashed: FileSnapshot?) async throws -> PutOutcome {
        let size = staged.metadata.size
        let plan = policy.partPlan(forObjectOf: size)
        // The parts' checksums, when the pass that hashed the artifact made them to this plan.
        let known = plan.flatMap { plan in staged.parts.flatMap { $0.fit(plan, size: size) ? $0 : nil } }
        if let outcome = try await prover.compare(key, metadata: staged.metadata, localFile: staged.path, parts: known) {
            return outcome
        }
        try Self.checkUnchanged(staged.path, since: hashed)
        guard let plan else {
            let reporter = progress?("uploading \(key)", size)
            defer { reporter?.finish() }
            let sent = UploadProgress(reporter, parts: 1)
            return try await put(key, body: .file(path: staged.path, offset: 0, length: size, sent: { sent.partSent(0, upTo: $0) }),
                                 metadata: staged.metadata, localFile: staged.path, condition: ("If-None-Match", "*"))
        }
        let parts = try known ?? multipart.hashParts(staged, plan: plan)
        return try await multipart.upload(key, staged: staged, parts: parts, hashed: hashed)
    }

    /// A single conditional PUT: `.created` only when it succeeds and what it stored is
    /// proven (`confirmCreated`). 412 means the key exists: compare it. `localFile`: the
    /// body's bytes on disk, if any.
    func put(_ key: String, body: S3Body, metadata: ObjectMetadata, localFile: String?, condition: (String, String)) async throws -> PutOutcome {
        let objectKey = objects.target.objectKey(key)
        let response = try await client.send(
            "PUT", key: objectKey, headers: objects.objectHeaders(metadata) + [condition] + objects.checksumHeaders(metadata),
            body: body, payloadSHA256: metadata.sha256.hex, operation: "PUT")
        switch response.status {
        case 200:
            objects.created.set(key, response.headers["etag"])
            try await confirmCreated(key, metadata: metadata, answer: response)
            return .created
        case 412:
            guard let outcome = try await prover.compare(key, metadata: metadata, localFile: localFile) else {
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
    /// never learns this run created it (`delete` checks its ETag), and the error reported
    /// (with a note when the removal fails too).
    func confirmCreated(_ key: String, metadata: ObjectMetadata, answer: S3Response?) async throws {
        // An object sent whole carries its SHA-256 in every mode but `none`.
        if policy.checksum.sendsChecksums, let answer, case .fullObject(let digest, _) = S3Storage.StoreChecksum(answer.headers), digest == metadata.sha256 {
            return
        }
        do {
            guard let info = try await objects.head(key) else {
                throw ModelCastError.io(operation: "check stored object", path: objects.shown(key), reason: "missing after upload")
            }
            if let problem = info.difference(from: metadata) {
                throw ModelCastError.io(operation: "check stored object", path: objects.shown(key), reason: problem)
            }
        } catch {
            await objects.removeUnproven(key)
            throw error
        }
    }

    /// Fails, naming the file and what changed, if the file at `path` is no longer
    /// the one in `hashed` (nil: a temporary copy, nothing to check).
    static func checkUnchanged(_ path: String, since hashed: FileSnapshot?) throws {
        guard let hashed else { return }
        let now = try FileSnapshot.current(path)
        guard now == hashed else {
            throw ModelCastError.io(
                operation: "upload", path: path,
                reason: "the file changed after it was hashed (\(now.changes(since: hashed))), so it may no longer hold the bytes whose SHA-256 is being published; run again once nothing writes to it")
        }
    }
}
