import Foundation

/// HTTP headers and facts stored with an object.
package struct ObjectMetadata: Codable, Equatable, Sendable {
    package var cacheControl: String
    package var contentType: String
    package var size: Int64
    package var sha256: SHA256Digest

    enum CodingKeys: String, CodingKey {
        case cacheControl = "cache_control", contentType = "content_type", size, sha256
    }

    package init(cacheControl: String, contentType: String, size: Int64, sha256: SHA256Digest) {
        self.cacheControl = cacheControl
        self.contentType = contentType
        self.size = size
        self.sha256 = sha256
    }

    /// The metadata of small bytes held in memory (a manifest, record or signature).
    init(of data: Data, cacheControl: String, contentType: String) throws {
        self.init(cacheControl: cacheControl, contentType: contentType, size: Int64(data.count), sha256: try SHA256Hasher.digest(data))
    }
}

/// What a store knows about an object without reading it.
package struct ObjectInfo: Equatable, Sendable {
    package var size: Int64
    /// The SHA-256 the store itself computed over the whole object (an S3 full-object
    /// checksum), never a value a writer set; nil for a plain directory or when there is none.
    package var sha256: SHA256Digest?
    package var contentType: String?
    package var cacheControl: String?
    /// An opaque version tag for conditional replaces (an S3 ETag, or a file's inode/mtime).
    package var etag: String?
    /// The Content-Encoding the store will serve the object with: modelcast never sets
    /// one, another tool may (verify fails an encoded artifact through every source).
    package var contentEncoding: String?

    package init(size: Int64, sha256: SHA256Digest? = nil, contentType: String? = nil, cacheControl: String? = nil, etag: String? = nil,
                 contentEncoding: String? = nil) {
        self.size = size
        self.sha256 = sha256
        self.contentType = contentType
        self.cacheControl = cacheControl
        self.etag = etag
        self.contentEncoding = contentEncoding
    }
}

extension ObjectInfo {
    /// How this (what a HEAD reports) differs from what was stored, `metadata`: the size,
    /// the store's SHA-256 where it reports one, Cache-Control and Content-Type (the
    /// store's text quoted, as anyone who can write the object chose it); nil when it does not.
    package func difference(from metadata: ObjectMetadata) -> String? {
        if size != metadata.size { return "\(size) bytes, expected \(metadata.size)" }
        if let sha256, sha256 != metadata.sha256 { return "sha256 \(sha256.hex), expected \(metadata.sha256.hex)" }
        if let cacheControl, cacheControl != metadata.cacheControl {
            return "Cache-Control \(quotedValue(cacheControl)), expected \(quotedValue(metadata.cacheControl))"
        }
        if let contentType, mediaType(contentType) != mediaType(metadata.contentType) {
            return "Content-Type \(quotedValue(contentType)), expected \(quotedValue(metadata.contentType))"
        }
        return nil
    }
}

/// An artifact already written to local disk, ready to be stored under a key.
package struct StagedObject: Sendable {
    /// Where the bytes are.
    package let path: String
    package let metadata: ObjectMetadata
    /// True for a temporary copy the store may move or delete; false for the
    /// user's own file, uploaded in place and never touched.
    package var isTemporary = true
    /// For the user's own file (`isTemporary == false`): the file as it was when
    /// `metadata` (its size and SHA-256) was computed. A store uploading it in place
    /// refuses to finish the upload if the file no longer matches. nil: compare with
    /// the file as it is when the upload starts.
    package var source: FileSnapshot?
    /// The SHA-256 of each part of the bytes, computed in the read that gave
    /// `metadata.sha256` (see `MultipartUploads.plan`): a store uploading in parts sends
    /// them as the parts' checksums instead of reading the file again. nil: the store
    /// computes what it needs.
    package var parts: PartDigests?

    package init(path: String, metadata: ObjectMetadata, isTemporary: Bool = true, source: FileSnapshot? = nil, parts: PartDigests? = nil) {
        self.path = path
        self.metadata = metadata
        self.isTemporary = isTemporary
        self.source = source
        self.parts = parts
    }
}

/// The outcome of `putIfAbsent`.
package enum PutOutcome: Equatable, Sendable {
    /// The key did not exist and now holds the object, proven by the store before it
    /// answers: its size and SHA-256 (the store's checksum of the bytes it received, or the
    /// object checked after the write), and the metadata it is served with.
    case created
    /// The key already held exactly these bytes: nothing was written.
    case unchanged
}

/// How an object's bytes were proven by `proveContent`.
package enum ContentProof: Equatable, Sendable {
    /// Read back and hashed (a directory file, or an S3 object downloaded because the store gave no usable checksum).
    case hashed
    /// The store's own SHA-256 checksum (full-object, or composite over parts compared with `localFile`) matched.
    case storeChecksum
    /// Only the size was checked: `trustStored` was set and the store gave no usable checksum.
    case trustedSize
}

/// Where a publish lands: a local directory or an object store. Publish, verify,
/// rollback and prune are written once against this protocol.
///
/// Keys are `/`-separated paths relative to the target root (`models/x/1.0.0/x.gguf`).
/// The requirements are the eight object operations every store has; what only some
/// targets offer (a lock, a hosting folder, multipart uploads…) is in `capabilities`,
/// which each backend states in full: nothing is offered by a silent default.
package protocol Storage: Sendable {
    /// A display form of the target (`/srv/models`, `s3://bucket/prefix`), never with credentials.
    var location: String { get }

    /// What the target offers beyond objects.
    var capabilities: StorageCapabilities { get }

    /// Metadata of `key`, or nil when it does not exist.
    func head(_ key: String) async throws -> ObjectInfo?

    /// The bytes of a small object (manifests, history records) with what the store said
    /// of them in the same answer: their etag (for a later conditional `replace`),
    /// Cache-Control and Content-Type (no SHA-256: the caller holds the bytes). nil when
    /// it does not exist. Refuses objects larger than `limit`.
    func getWithInfo(_ key: String, limit: Int) async throws -> (data: Data, info: ObjectInfo)?

    /// Bytes `range` of `key` (at most 16 MiB; fewer where the object ends first), for
    /// readers that need a few records of a large object (a zip's central directory).
    /// Throws `StorageError.missing(key)` when it does not exist.
    func read(_ key: String, range: ClosedRange<Int64>) async throws -> Data

    /// Keys under `prefix`, sorted.
    func list(prefix: String) async throws -> [String]

    /// Stores `body` under `key` unless the key exists. An existing key with the same
    /// bytes is `.unchanged`; with different bytes it is an error naming the key, and
    /// nothing is written. A staged file is consumed. `.created` comes only once what was
    /// written is proven (see `PutOutcome.created`), so it needs no check of its own.
    func putIfAbsent(_ key: String, _ body: PutBody) async throws -> PutOutcome

    /// Atomically replaces (or creates) `key`: readers see the old or the new bytes,
    /// never a mix. With `ifMatch`, fails when the current object's etag differs
    /// (another publisher got there first); `ifMatch: ""` requires that it not exist.
    func replace(_ key: String, data: Data, metadata: ObjectMetadata, ifMatch: String?) async throws

    /// Deletes `key` (no error if it is already gone).
    func delete(_ key: String) async throws

    /// Proves `key` holds exactly `size` bytes with SHA-256 `sha256` before a manifest names it again.
    /// `localFile`: a local file with those bytes (the file being published), if any, which lets a store
    /// check a composite multipart checksum without downloading. `trustStored`: where the store has no
    /// usable checksum, accept a matching size instead of downloading and hashing.
    /// Throws `StorageError.missing(key)` when absent, `StorageError.contentMismatch(...)` naming the key,
    /// expected and actual (size and/or sha256) when different.
    func proveContent(_ key: String, size: Int64, sha256: SHA256Digest, localFile: String?, trustStored: Bool) async throws -> ContentProof
}

/// What `putIfAbsent` stores.
package enum PutBody: Sendable {
    /// An artifact already on local disk.
    case staged(StagedObject)
    /// Small bytes held in memory (history records).
    case bytes(Data, ObjectMetadata)
}

extension Storage {
    /// The bytes of a small object, or nil when it does not exist. Refuses objects larger than `limit`.
    package func get(_ key: String, limit: Int) async throws -> Data? {
        try await getWithInfo(key, limit: limit)?.data
    }

    /// Stores a staged file under `key` unless the key exists (see `putIfAbsent(_:_:)`).
    package func putIfAbsent(_ key: String, staged: StagedObject) async throws -> PutOutcome {
        try await putIfAbsent(key, .staged(staged))
    }

    /// Stores small bytes under `key` unless it exists (history records).
    package func putIfAbsent(_ key: String, data: Data, metadata: ObjectMetadata) async throws -> PutOutcome {
        try await putIfAbsent(key, .bytes(data, metadata))
    }

    /// Requests sent so far by HTTP method, for stores reached over the network.
    package var requestCounts: [String: Int]? { capabilities.requestCounts?() }

    /// Releases what the target holds open (connections). Call once, when done.
    package func close() async { await capabilities.close?() }
}

/// What a target offers beyond the object operations, stated in full by each backend.
package struct StorageCapabilities: Sendable {
    /// Where artifacts are staged before `putIfAbsent` (every target has a place).
    package var staging: StagingSpace
    /// The target's exclusive lock for a command that writes (publishes, rollbacks and
    /// prunes run one at a time), for a target whose writers take turns (a directory).
    /// nil: runs write at the same time and conditional writes keep them apart (an
    /// object store); removing an object then follows `Removals`.
    package var lock: WriterLock?
    /// The local folder the hosting files (`_headers`, `_modelcast/…`) are written into,
    /// through the target; nil for targets that get none.
    package var hosting: HostingFolder?
    /// Uploads in parts, with the upkeep of those a killed publish left (an object store).
    package var multipart: MultipartUploads?
    /// True when a plain file can be uploaded from where it is (no staged copy): the
    /// store reads it while uploading and checks it did not change.
    package var uploadsInPlace: Bool
    /// Requests sent so far by HTTP method, for stores reached over the network.
    package var requestCounts: (@Sendable () -> [String: Int])?
    /// Releases what the target holds open (connections).
    package var close: (@Sendable () async -> Void)?
    /// Every key under a prefix with its size, a page of many keys per request (an object
    /// store's listing): checking that many objects are present costs a few requests
    /// instead of one each. nil where a look at each object is as cheap (a directory).
    package var listSizes: (@Sendable (_ prefix: String) async throws -> [String: Int64])?

    package init(staging: StagingSpace, lock: WriterLock?, hosting: HostingFolder?, multipart: MultipartUploads?, uploadsInPlace: Bool,
                requestCounts: (@Sendable () -> [String: Int])?, close: (@Sendable () async -> Void)?,
                listSizes: (@Sendable (_ prefix: String) async throws -> [String: Int64])?) {
        self.staging = staging
        self.lock = lock
        self.hosting = hosting
        self.multipart = multipart
        self.uploadsInPlace = uploadsInPlace
        self.requestCounts = requestCounts
        self.close = close
        self.listSizes = listSizes
    }

    /// True when `lock` gives one writer the target to itself.
    package var writersTakeTurns: Bool { lock != nil }

    /// Where the hosting files are (they name it, and are read back from it); nil for
    /// targets that get none.
    package var hostingRoot: String? { hosting?.root }
}

/// A target's hosting-file folder (a directory target): the files a static host reads
/// (`_headers`, `.htaccess`, `_modelcast/…`) are written through `write`, as objects are
/// through the storage operations, so the target decides how (a directory: whole or not
/// at all, durable) and a test's target sees and can fail each write.
package struct HostingFolder: Sendable {
    /// The folder's path.
    package let root: String
    /// Writes `content` at `path` (relative to `root`, made of the target's key rules),
    /// replacing the file there whole; `executable` for a script.
    package let write: @Sendable (_ path: String, _ content: Data, _ executable: Bool) async throws -> Void

    package init(root: String, write: @escaping @Sendable (_ path: String, _ content: Data, _ executable: Bool) async throws -> Void) {
        self.root = root
        self.write = write
    }
}

/// Where a target stages artifacts.
package struct StagingSpace: Sendable {
    /// The directory (same file system as the target when that makes storing a rename).
    package let directory: @Sendable () throws -> String
    /// Removes staging space left empty after a publish.
    package let finish: @Sendable () -> Void

    package init(directory: @escaping @Sendable () throws -> String, finish: @escaping @Sendable () -> Void = {}) {
        self.directory = directory
        self.finish = finish
    }
}

/// A target's exclusive writer lock.
package struct WriterLock: Sendable {
    /// Takes the lock, clearing what a killed run left staged; nil when the target does
    /// not exist and `create` is false.
    package let acquire: @Sendable (_ create: Bool) throws -> (any StorageLock)?

    package init(acquire: @escaping @Sendable (_ create: Bool) throws -> (any StorageLock)?) {
        self.acquire = acquire
    }
}

/// A store's multipart uploads.
package struct MultipartUploads: Sendable {
    /// The part size an object of that many bytes is uploaded in, or nil when it is stored
    /// whole. The pass that hashes an artifact hashes those parts too
    /// (`StagedObject.parts`), so the upload reads the file only to send it.
    package let plan: @Sendable (_ objectSize: Int64) -> PartPlan?
    /// Uploads begun and never finished (a publish killed mid-multipart), started before a date.
    package let abandoned: @Sendable (_ startedBefore: Date) async throws -> [PendingUpload]
    /// Gives up an abandoned upload, freeing what the store keeps for it.
    package let abort: @Sendable (PendingUpload) async throws -> Void

    package init(plan: @escaping @Sendable (Int64) -> PartPlan?, abandoned: @escaping @Sendable (Date) async throws -> [PendingUpload],
                abort: @escaping @Sendable (PendingUpload) async throws -> Void) {
        self.plan = plan
        self.abandoned = abandoned
        self.abort = abort
    }
}

/// A held target lock, released when the value goes away.
package protocol StorageLock: AnyObject {}

/// A multipart upload begun and never completed or aborted (a publish killed mid-upload).
package struct PendingUpload: Sendable, Equatable {
    /// The key relative to the target root.
    package let key: String
    package let uploadID: String
    package let initiated: Date

    package init(key: String, uploadID: String, initiated: Date) {
        self.key = key
        self.uploadID = uploadID
        self.initiated = initiated
    }
}

/// Errors of the storage layer.
package enum StorageError: Error, Equatable, Sendable, LocalizedError, CustomStringConvertible {
    /// A key already holds different bytes; immutable keys are never overwritten.
    case conflict(key: String, existingSize: Int64, newSize: Int64, existingSHA256: String?, newSHA256: String)
    /// The object changed since it was read (a concurrent publisher).
    case preconditionFailed(key: String, expected: String, actual: String)
    /// An object is larger than a read was allowed to take.
    case tooLarge(key: String, size: Int64, limit: Int)
    /// A key that cannot be stored (empty, absolute, `..`).
    case invalidKey(String)
    /// A key expected to hold an object holds none.
    case missing(String)
    /// A key holds other bytes than expected. `actualSHA256` is nil when the size
    /// already differs and the bytes were not read; `detail` says how the difference
    /// was found (hashed, the store's checksum).
    case contentMismatch(key: String, expectedSize: Int64, expectedSHA256: String, actualSize: Int64, actualSHA256: String?, detail: String)

    package var description: String {
        switch self {
        case .conflict(let key, let existingSize, let newSize, let existingSHA, let newSHA):
            return "\(key) already exists with different content (\(existingSize) bytes\(existingSHA.map { ", sha256 \($0)" } ?? "")); refusing to overwrite it with \(newSize) bytes, sha256 \(newSHA). Published keys are immutable: publish a new version instead"
        case .preconditionFailed(let key, let expected, let actual):
            return "\(key) changed while publishing (expected version \(expected), found \(actual)): another publish ran at the same time; nothing was overwritten, run again"
        case .tooLarge(let key, let size, let limit):
            return "\(key) is \(size) bytes, more than the \(limit) allowed for it"
        case .invalidKey(let key):
            return "invalid object key '\(key)'"
        case .missing(let key):
            return "\(key) is missing from the target"
        case .contentMismatch(let key, let expectedSize, let expectedSHA, let actualSize, let actualSHA, let detail):
            return "\(key) does not hold the expected bytes: expected \(expectedSize) bytes, sha256 \(expectedSHA); found \(actualSize) bytes"
                + (actualSHA.map { ", sha256 \($0)" } ?? "") + (detail.isEmpty ? "" : " (\(detail))")
        }
    }

    package var errorDescription: String? { description }
}

/// Rejects keys that could escape the target root.
func validateKey(_ key: String) throws {
    guard isValidKey(key) else { throw StorageError.invalidKey(key) }
}

/// True for a key that stays inside the target root: not empty, not absolute, no empty,
/// `.` or `..` segment.
func isValidKey(_ key: String) -> Bool {
    let parts = key.split(separator: "/", omittingEmptySubsequences: false)
    return !key.isEmpty && !key.hasPrefix("/") && !parts.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." })
}

/// What one read of a stored file gave: its size and SHA-256.
struct FileHashes {
    var size: Int64
    var sha256: SHA256Digest

    /// Reads the regular file at `path` once, in 1 MiB blocks (memory stays flat). With
    /// `followLinks: false` a symbolic link is refused, not followed (the check is on the
    /// open file).
    static func read(_ path: String, followLinks: Bool) throws -> FileHashes {
        let file = try FileDescriptor.openForReading(path, followLinks: followLinks)
        let info = try file.status()
        guard case .regular = FileType(mode: info.st_mode) else {
            throw ModelCastError.specialFile(path: path, kind: "not a regular file where an object belongs")
        }
        Platform.adviseSequential(file.fd)
        let whole = try SHA256Hasher()
        var total: Int64 = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = try file.read(into: buffer)
            if n == 0 { break }
            whole.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            total += Int64(n)
        }
        return FileHashes(size: total, sha256: whole.finalize())
    }
}

/// The most one ranged `read` returns.
enum RangedRead {
    static let maximum = 16 << 20
}
