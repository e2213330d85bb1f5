import Foundation
// MD5Hasher: S3's ETag of an object stored whole is the MD5 of its bytes, and the fake keeps that rule.
@testable import ModelCastCore

/// The objects of an in-memory target, shared by every writer's `InMemoryStorage` handle
/// (two handles on one bucket are two processes publishing to one prefix). The test reads
/// and changes it directly, as another tool would, with no fault and no log entry.
package final class InMemoryBucket: @unchecked Sendable {
    // @unchecked: every stored property is read and written under `lock` only.

    /// One stored object: its bytes, the headers it is served with, its ETag.
    package struct Object: Equatable, Sendable {
        package var data: Data
        package var contentType: String
        package var cacheControl: String
        package var sha256: SHA256Digest
        package var etag: String
        /// True when the store keeps a SHA-256 checksum of the object (S3 with checksums on,
        /// or an upload that sent one); false as for `--checksum none` or a tool that sent none.
        package var checksummed: Bool
    }

    /// How the store names an object's version (`ObjectInfo.etag`).
    package enum ETagRule: Sendable {
        /// S3: the quoted MD5 of the bytes, so identical bytes have identical ETags.
        case contentMD5
        /// A directory: every write a new version, whatever its bytes (an inode and mtime).
        case perWrite
    }

    private let lock = NSLock()
    private var objects: [String: Object] = [:]
    private var writes = 0
    private var entries: [LoggedOperation] = []
    package let etagRule: ETagRule

    package init(etagRule: ETagRule = .contentMD5) {
        self.etagRule = etagRule
    }

    /// One operation a handle sent, in the order the bucket saw them (across handles).
    package struct LoggedOperation: Equatable, Sendable {
        package let writer: String
        package let operation: StorageOperation
        package let key: String
    }

    /// Every operation sent so far, by every handle.
    package var log: [LoggedOperation] { lock.withLock { entries } }

    func record(_ writer: String, _ operation: StorageOperation, _ key: String) {
        lock.withLock { entries.append(LoggedOperation(writer: writer, operation: operation, key: key)) }
    }

    /// Every key, sorted.
    package var keys: [String] { lock.withLock { objects.keys.sorted() } }

    /// Every object by key: equal snapshots mean the bucket was left exactly as it was.
    package var snapshot: [String: Object] { lock.withLock { objects } }

    package subscript(key: String) -> Object? { lock.withLock { objects[key] } }

    /// The bytes under `key`, or nil.
    package func data(_ key: String) -> Data? { self[key]?.data }

    /// The manifest or history record under `key`, decoded (nil when there is none).
    package func release(_ key: String = "manifest.json") throws -> Release? {
        try data(key).map { try Release.decode($0, source: key) }
    }

    /// Stores `data` under `key` as another tool would (an upload with or without a
    /// checksum), replacing what is there.
    package func set(_ key: String, _ data: Data, contentType: String = "application/octet-stream",
                     cacheControl: String = CachePolicy.immutable, checksummed: Bool = true) {
        let object = Self.object(data, contentType: contentType, cacheControl: cacheControl, checksummed: checksummed)
        lock.withLock { objects[key] = stamped(object) }
    }

    /// Removes `key` as another tool would.
    package func remove(_ key: String) {
        lock.withLock { objects[key] = nil }
    }

    /// Puts back every object of `snapshot`, and only those.
    package func restore(_ snapshot: [String: Object]) {
        lock.withLock { objects = snapshot }
    }

    static func object(_ data: Data, contentType: String, cacheControl: String, checksummed: Bool) -> Object {
        // SHA-256 of bytes in memory cannot fail short of the library missing.
        let digest = try! SHA256Hasher.digest(data)
        return Object(data: data, contentType: contentType, cacheControl: cacheControl, sha256: digest, etag: "", checksummed: checksummed)
    }

    /// `object` with the ETag this bucket gives it. Call with `lock` held.
    private func stamped(_ object: Object) -> Object {
        var object = object
        writes += 1
        switch etagRule {
        case .contentMD5:
            object.etag = "\"" + md5Hex(object.data) + "\""
        case .perWrite:
            object.etag = "w\(writes)-\(object.data.count)"
        }
        return object
    }

    /// Atomically: runs `change` on the object under `key` (nil: none) and stores what it
    /// returns (nil: removes the key); an object without an ETag (a new write) gets one.
    func update<T>(_ key: String, _ change: (Object?) throws -> (Object?, T)) rethrows -> T {
        try lock.withLock {
            let (new, result) = try change(objects[key])
            if let new {
                objects[key] = new.etag.isEmpty ? stamped(new) : new
            } else {
                objects[key] = nil
            }
            return result
        }
    }
}

/// The eight operations of `Storage` and the hosting-file write, for fault rules and the operation log.
package enum StorageOperation: String, CaseIterable, Sendable {
    case head, get, read, list, put, replace, delete, prove
    /// A hosting file written (`StorageCapabilities.hosting`).
    case hosting

    /// True for the operations that change what is stored.
    package var writes: Bool { self == .put || self == .replace || self == .delete || self == .hosting }
}

/// The MD5 of `data`, lowercase hex: S3's ETag (unquoted) of an object stored whole.
package func md5Hex(_ data: Data) -> String {
    let hasher = try! MD5Hasher()
    data.withUnsafeBytes { hasher.update($0) }
    return hasher.finalizeHex()
}
