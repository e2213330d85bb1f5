import Foundation
import ModelCastCore

/// A `Storage` held in memory, for tests whose subject is the logic above the store
/// (commit, prune, rollback, history), with faults injected where the test says
/// (`faults`). One handle is one writer (one process); several handles on one
/// `InMemoryBucket` are writers racing on one target.
///
/// It keeps S3's semantics, which `StorageContractTests` checks against
/// `DirectoryStorage` and `S3Storage` on moto: put-if-absent compares the bytes under an
/// existing key (`.unchanged` or a conflict), `replace` with `ifMatch` is conditional on
/// the ETag, an object's ETag is the MD5 of its bytes (identical bytes, identical ETags: a
/// matching ETag never proves who wrote an object), a delete by the handle that created
/// the key applies only while the key still holds what it created, and `proveContent`
/// answers by the store's checksum. With `.directory` semantics the target instead has a
/// writer lock and an ETag per write, as a directory does.
package final class InMemoryStorage: Storage, @unchecked Sendable {
    // @unchecked: `created` and `counts` are read and written under `lock` only; the rest is immutable or Sendable.

    /// Which real target the fake stands for.
    package enum Semantics: Sendable {
        /// An object store: writers run at the same time, conditional writes keep them apart.
        case objectStore
        /// A directory: writers take turns under the target's lock.
        case directory
    }

    /// Thrown for every operation once the process was killed (`StorageFaults.kill(afterWrites:)`).
    package struct Killed: Error, CustomStringConvertible, Equatable {
        package let operation: StorageOperation
        package let key: String
        package var description: String { "killed before \(operation.rawValue) \(key)" }

        package init(operation: StorageOperation, key: String) {
            self.operation = operation
            self.key = key
        }
    }

    /// Thrown when a second writer takes a directory target's lock while another holds it
    /// (a real second process would wait; here the test would deadlock).
    package struct LockHeld: Error, CustomStringConvertible {
        package var description: String { "the in-memory target's writer lock is held by another writer" }
    }

    package let bucket: InMemoryBucket
    package let faults = StorageFaults()
    package let semantics: Semantics
    /// Names this writer in the bucket's log.
    package let writer: String
    /// Where the store's staging directory and (for `.directory`) the hosting files go.
    private let scratch: Scratch
    private let hostingDirectory: String?
    /// False as for `--checksum none` (Backblaze B2): objects this handle writes carry no
    /// SHA-256 checksum, so proving them means reading them back (or, trusted, their size).
    private let checksums: Bool
    private let lock = NSLock()
    private var created: [String: String] = [:]
    private var counts: [String: Int] = [:]

    /// A writer on `bucket` (a new, empty one by default). `hostingFiles`: give the target a
    /// hosting folder (in a scratch directory, `hostingRoot`) written through `.hosting` operations, as a directory target has.
    package init(bucket: InMemoryBucket = InMemoryBucket(), semantics: Semantics = .objectStore, writer: String = "A",
                 checksums: Bool = true, hostingFiles: Bool = false) throws {
        self.bucket = bucket
        self.semantics = semantics
        self.writer = writer
        self.checksums = checksums
        scratch = try Scratch("modelcast-memory")
        hostingDirectory = hostingFiles ? try scratch.mkdir("hosting") : nil
    }

    /// A second writer on the same bucket, with faults of its own.
    package func otherWriter(_ name: String = "B") throws -> InMemoryStorage {
        try InMemoryStorage(bucket: bucket, semantics: semantics, writer: name, checksums: checksums, hostingFiles: false)
    }

    package var location: String { "memory://\(writer == "A" ? "" : writer.lowercased() + "@")target" }

    /// The folder the hosting files are written into, when the target has one.
    package var hostingRoot: String? { hostingDirectory }

    /// Operations sent by this handle, by kind (`Storage.requestCounts`).
    package var operationCounts: [String: Int] { lock.withLock { counts } }

    private static let writerLocks = WriterLocks()

    package var capabilities: StorageCapabilities {
        let staging = scratch.at("staging")
        let space = StagingSpace(directory: {
            try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: true)
            return staging
        })
        let bucket = self.bucket
        let lock: WriterLock? = semantics == .directory ? WriterLock { _ in try Self.writerLocks.acquire(bucket) } : nil
        let counts: @Sendable () -> [String: Int] = { [self] in operationCounts }
        let sizes: @Sendable (String) async throws -> [String: Int64] = { [self] prefix in try await self.sizes(prefix: prefix) }
        let listSizes = semantics == .objectStore ? sizes : nil
        let hosting = hostingDirectory.map { root in
            HostingFolder(root: root) { [self] path, content, executable in try await writeHostingFile(path, content: content, executable: executable, root: root) }
        }
        return StorageCapabilities(staging: space, lock: lock, hosting: hosting, multipart: nil, uploadsInPlace: semantics == .objectStore,
                                   requestCounts: counts, close: nil, listSizes: listSizes)
    }

    /// A hosting file, written into the scratch folder as one operation of this handle
    /// (`.hosting`: counted, and failed or killed as the faults say).
    private func writeHostingFile(_ path: String, content: Data, executable: Bool, root: String) async throws {
        try await perform(.hosting, path) {
            let file = URL(fileURLWithPath: root + "/" + path)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try content.write(to: file, options: .atomic)
            if executable { try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: file.path) }
        }
    }

    // MARK: The eight operations

    package func head(_ key: String) async throws -> ObjectInfo? {
        try await perform(.head, key) {
            guard let object = bucket[key] else { return nil }
            return ObjectInfo(size: Int64(object.data.count), sha256: object.checksummed && semantics == .objectStore ? object.sha256 : nil,
                              contentType: object.contentType, cacheControl: semantics == .objectStore ? object.cacheControl : nil, etag: object.etag)
        }
    }

    package func getWithInfo(_ key: String, limit: Int) async throws -> (data: Data, info: ObjectInfo)? {
        try await perform(.get, key) {
            guard let object = bucket[key] else { return nil }
            guard object.data.count <= limit else { throw StorageError.tooLarge(key: key, size: Int64(object.data.count), limit: limit) }
            return (object.data, ObjectInfo(size: Int64(object.data.count), contentType: object.contentType,
                                            cacheControl: semantics == .objectStore ? object.cacheControl : nil, etag: object.etag))
        }
    }

    /// The most one ranged read returns (`RangedRead.maximum` in Core).
    static let maximumRead = 16 << 20

    package func read(_ key: String, range: ClosedRange<Int64>) async throws -> Data {
        try await perform(.read, key) {
            guard range.count <= Self.maximumRead else { throw StorageError.tooLarge(key: key, size: Int64(range.count), limit: Self.maximumRead) }
            guard let data = bucket[key]?.data else { throw StorageError.missing(key) }
            guard range.lowerBound < Int64(data.count) else { return Data() }
            return data.subdata(in: Int(range.lowerBound)..<min(data.count, Int(range.upperBound) + 1))
        }
    }

    package func list(prefix: String) async throws -> [String] {
        try await perform(.list, prefix) { bucket.keys.filter { $0.hasPrefix(prefix) } }
    }

    /// Every key under `prefix` with its size: an object store's listing.
    func sizes(prefix: String) async throws -> [String: Int64] {
        try await perform(.list, prefix) {
            var sizes: [String: Int64] = [:]
            for (key, object) in bucket.snapshot where key.hasPrefix(prefix) { sizes[key] = Int64(object.data.count) }
            return sizes
        }
    }

    package func putIfAbsent(_ key: String, _ body: PutBody) async throws -> PutOutcome {
        // A staged file is consumed whatever happens, as both real stores do.
        defer { if case .staged(let staged) = body, staged.isTemporary { unlink(staged.path) } }
        let outcome = try await perform(.put, key, again: { (outcome: PutOutcome) -> PutOutcome in outcome == .created ? .unchanged : outcome }) {
            let (data, metadata) = try Self.bytes(of: body, key: key)
            let new = InMemoryBucket.object(data, contentType: metadata.contentType, cacheControl: metadata.cacheControl, checksummed: checksums)
            return try bucket.update(key) { existing -> (InMemoryBucket.Object?, PutOutcome) in
                guard let existing else { return (new, .created) }
                guard existing.data.count == data.count, existing.sha256 == metadata.sha256 else {
                    throw StorageError.conflict(key: key, existingSize: Int64(existing.data.count), newSize: metadata.size,
                                                existingSHA256: existing.data.count == data.count ? existing.sha256.hex : nil, newSHA256: metadata.sha256.hex)
                }
                return (existing, .unchanged)
            }
        }
        // Only an answer saying so tells a writer it created the key (a lost answer's retry says `.unchanged`).
        if outcome == .created, semantics == .objectStore, let etag = bucket[key]?.etag {
            lock.withLock { created[key] = etag }
        }
        return outcome
    }

    package func replace(_ key: String, data: Data, metadata: ObjectMetadata, ifMatch: String?) async throws {
        try await perform(.replace, key, again: { _ in throw Self.lostPrecondition(key, ifMatch: ifMatch, bucket: self.bucket) }) {
            let new = InMemoryBucket.object(data, contentType: metadata.contentType, cacheControl: metadata.cacheControl, checksummed: checksums)
            try bucket.update(key) { existing in
                if let ifMatch, (existing?.etag ?? "") != ifMatch {
                    throw StorageError.preconditionFailed(key: key, expected: ifMatch.isEmpty ? "none" : ifMatch, actual: existing?.etag ?? "none")
                }
                return (new, ())
            }
        }
    }

    package func delete(_ key: String) async throws {
        try await perform(.delete, key) {
            let mine = lock.withLock { created[key] }
            bucket.update(key) { existing in
                // A key this writer created goes only while it holds what was stored: once
                // another writer replaced it, it is theirs (S3Storage's If-Match delete).
                if let mine, let existing, existing.etag != mine { return (existing, ()) }
                return (nil, ())
            }
            lock.withLock { created[key] = nil }
        }
    }

    package func proveContent(_ key: String, size: Int64, sha256: SHA256Digest, localFile: String?, trustStored: Bool) async throws -> ContentProof {
        try await perform(.prove, key) {
            guard let object = bucket[key] else { throw StorageError.missing(key) }
            let actualSize = Int64(object.data.count)
            let byChecksum = semantics == .objectStore && object.checksummed
            guard actualSize == size else {
                throw StorageError.contentMismatch(key: key, expectedSize: size, expectedSHA256: sha256.hex, actualSize: actualSize, actualSHA256: nil,
                                                   detail: semantics == .objectStore ? "size the store reports" : "file size")
            }
            guard object.sha256 == sha256 else {
                throw StorageError.contentMismatch(key: key, expectedSize: size, expectedSHA256: sha256.hex, actualSize: actualSize, actualSHA256: object.sha256.hex,
                                                   detail: byChecksum ? "the store's SHA-256 checksum of the object" : semantics == .objectStore ? "downloaded and hashed" : "read back and hashed")
            }
            if byChecksum { return .storeChecksum }
            return trustStored && semantics == .objectStore ? .trustedSize : .hashed
        }
    }

    // MARK: Faults, log, and the bytes of a put

    /// Sends one operation: logs it, applies the faults, performs it. `again`: what the
    /// client's retry answers after a lost answer (default: the same answer).
    private func perform<T>(_ operation: StorageOperation, _ key: String, again: ((T) throws -> T)? = nil, _ body: () throws -> T) async throws -> T {
        if operation != .list { try Self.validate(key) }
        bucket.record(writer, operation, key)
        lock.withLock { counts[operation.rawValue, default: 0] += 1 }
        switch try faults.action(for: operation, key: key) {
        case nil:
            return try body()
        case .fail(let error):
            throw error
        case .loseAnswer:
            let first = try body()
            return try again?(first) ?? first
        case .before(let hook):
            try await hook()
            return try body()
        case .after(let hook):
            let result = try body()
            try await hook()
            return result
        }
    }

    /// The precondition failure a retried conditional replace meets once its first attempt landed.
    private static func lostPrecondition(_ key: String, ifMatch: String?, bucket: InMemoryBucket) -> Error {
        StorageError.preconditionFailed(key: key, expected: ifMatch?.isEmpty == false ? ifMatch! : "none", actual: bucket[key]?.etag ?? "none")
    }

    /// Keys that could escape a target root are refused, as every store refuses them.
    static func validate(_ key: String) throws {
        let parts = key.split(separator: "/", omittingEmptySubsequences: false)
        guard !key.isEmpty, !key.hasPrefix("/"), !parts.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else {
            throw StorageError.invalidKey(key)
        }
    }

    /// The bytes `body` stores and their metadata; a staged file must still hash as staged.
    private static func bytes(of body: PutBody, key: String) throws -> (Data, ObjectMetadata) {
        switch body {
        case .bytes(let data, let metadata):
            return (data, metadata)
        case .staged(let staged):
            let data = try Data(contentsOf: URL(fileURLWithPath: staged.path))
            let digest = try SHA256Hasher.digest(data)
            guard Int64(data.count) == staged.metadata.size, digest == staged.metadata.sha256 else {
                throw ModelCastError.io(operation: "store", path: key, reason: "the staged file \(staged.path) changed: \(data.count) bytes, sha256 \(digest.hex), staged as \(staged.metadata.size) bytes, sha256 \(staged.metadata.sha256.hex)")
            }
            return (data, staged.metadata)
        }
    }
}

/// The writer locks of in-memory directory targets, one per bucket.
private final class WriterLocks: @unchecked Sendable {
    // @unchecked: `held` is read and written under `lock` only.
    private let lock = NSLock()
    private var held: Set<ObjectIdentifier> = []

    /// A held lock released when it goes away.
    final class Held: StorageLock {
        let release: () -> Void
        init(release: @escaping () -> Void) { self.release = release }
        deinit { release() }
    }

    func acquire(_ bucket: InMemoryBucket) throws -> any StorageLock {
        let id = ObjectIdentifier(bucket)
        try lock.withLock {
            guard held.insert(id).inserted else { throw InMemoryStorage.LockHeld() }
        }
        return Held { [self] in _ = lock.withLock { held.remove(id) } }
    }
}
