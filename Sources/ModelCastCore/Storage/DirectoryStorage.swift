import Foundation

/// A local directory as a publish target: the directory is what gets synced to a
/// static host. Objects are written under temporary names and linked or renamed
/// into place, fsynced, so an interrupted publish never leaves a partial object
/// or manifest under a real key.
public struct DirectoryStorage: Storage {
    /// The target directory (created if missing).
    public let root: String
    /// Where staged artifacts wait; inside the target so storing them is a `link`.
    static let stagingName = ".modelcast-staging"

    public init(root: String) {
        self.root = root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root
    }

    public var location: String { root }

    private func path(_ key: String) throws -> String {
        try validateKey(key)
        return root + "/" + key
    }

    public func stagingDirectory() throws -> String {
        let directory = root + "/" + Self.stagingName
        try makeDirectories(directory)
        return directory
    }

    public func head(_ key: String) async throws -> ObjectInfo? {
        let file = try path(key)
        guard let info = try linkStatus(file) else { return nil }
        guard case .regular = FileType(mode: info.st_mode) else {
            throw ModelCastError.specialFile(path: file, kind: "not a regular file where an object belongs")
        }
        return ObjectInfo(
            size: Int64(info.st_size), contentType: ContentType.forArtifact(named: key),
            etag: "\(info.st_ino)-\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)-\(info.st_size)")
    }

    public func proveContent(_ key: String, size: Int64, sha256: SHA256Digest, localFile: String?, trustStored: Bool) async throws -> ContentProof {
        guard let info = try await head(key) else { throw StorageError.missing(key) }  // STUB: size only
        guard info.size == size else {
            throw StorageError.contentMismatch(key: key, expectedSize: size, expectedSHA256: sha256.hex, actualSize: info.size, actualSHA256: nil, detail: "")
        }
        return .hashed
    }

    public func get(_ key: String, limit: Int) async throws -> Data? {
        let file = try path(key)
        // Only a regular file is an object, as for head(); a symbolic link is refused
        // (it could point anywhere, at anything of any size).
        guard let linkInfo = try linkStatus(file) else { return nil }
        guard case .regular = FileType(mode: linkInfo.st_mode) else {
            throw ModelCastError.specialFile(path: file, kind: "not a regular file where an object belongs")
        }
        // Opened without following a link, and the size taken from the open file, so a
        // file swapped in after the lstat is judged by what is actually read.
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.openForReading(file, followLinks: false)
        } catch ModelCastError.notFound {
            return nil
        }
        let info = try descriptor.status()
        guard case .regular = FileType(mode: info.st_mode) else {
            throw ModelCastError.specialFile(path: file, kind: "not a regular file where an object belongs")
        }
        guard info.st_size <= limit else { throw StorageError.tooLarge(key: key, size: Int64(info.st_size), limit: limit) }
        var data = Data()
        data.reserveCapacity(Int(info.st_size))
        while true {
            // Up to the size seen, plus one byte to notice a file that grew since.
            let want = min(1 << 20, max(Int(info.st_size) - data.count, 0) + 1, limit - data.count + 1)
            let bytes = try descriptor.read(at: Int64(data.count), count: want)
            if bytes.isEmpty { break }
            data.append(contentsOf: bytes)
            guard data.count <= limit else { throw StorageError.tooLarge(key: key, size: Int64(data.count), limit: limit) }
        }
        return data
    }

    public func list(prefix: String) async throws -> [String] {
        var keys: [String] = []
        guard let enumerator = FileManager.default.enumerator(atPath: root) else { return [] }
        while let relative = enumerator.nextObject() as? String {
            if relative.hasPrefix(".") || relative.contains("/.") { continue }  // staging and temporary files
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isDirectory), !isDirectory.boolValue,
               relative.hasPrefix(prefix) {
                keys.append(relative)
            }
        }
        return keys.sorted()
    }

    public func putIfAbsent(_ key: String, staged: StagedObject) async throws -> PutOutcome {
        let destination = try path(key)
        // The directory target always stores its own copy: a link to the user's
        // file would change whenever that file does.
        precondition(staged.isTemporary, "DirectoryStorage stores temporary copies only")
        defer {
            unlink(staged.path)
            TemporaryFiles.shared.unregister(staged.path)
        }
        try makeDirectories((destination as NSString).deletingLastPathComponent)
        let staging = try FileDescriptor.openForReading(staged.path)
        try staging.sync()
        // link(2) fails if the key exists: an atomic put-if-absent, never an overwrite.
        if link(staged.path, destination) == 0 {
            syncDirectory(of: destination)
            return .created
        }
        let code = errno
        guard code == EEXIST else {
            throw ModelCastError.io(operation: "store", path: destination, reason: errnoDescription(code))
        }
        return try compareExisting(key: key, path: destination, size: staged.metadata.size, sha256: staged.metadata.sha256)
    }

    public func putIfAbsent(_ key: String, data: Data, metadata: ObjectMetadata) async throws -> PutOutcome {
        let destination = try path(key)
        try makeDirectories((destination as NSString).deletingLastPathComponent)
        let file = try AtomicFile(destination: destination)
        try data.withUnsafeBytes { try file.descriptor.writeAll($0) }
        try file.descriptor.sync()
        if link(file.temporaryPath, destination) == 0 {
            file.discard()
            syncDirectory(of: destination)
            return .created
        }
        let code = errno
        file.discard()
        guard code == EEXIST else {
            throw ModelCastError.io(operation: "store", path: destination, reason: errnoDescription(code))
        }
        return try compareExisting(key: key, path: destination, size: metadata.size, sha256: metadata.sha256)
    }

    /// An existing object is "unchanged" only if its bytes hash the same.
    private func compareExisting(key: String, path: String, size: Int64, sha256: SHA256Digest) throws -> PutOutcome {
        let info = try linkStatus(path)
        let existingSize = Int64(info?.st_size ?? -1)
        guard existingSize == size else {
            throw StorageError.conflict(key: key, existingSize: existingSize, newSize: size, existingSHA256: nil, newSHA256: sha256.hex)
        }
        let existing = try StreamDigester.digest(ofFileAt: path)
        guard existing.sha256 == sha256 else {
            throw StorageError.conflict(key: key, existingSize: existingSize, newSize: size, existingSHA256: existing.sha256.hex, newSHA256: sha256.hex)
        }
        return .unchanged
    }

    public func replace(_ key: String, data: Data, metadata: ObjectMetadata, ifMatch: String?) async throws {
        let destination = try path(key)
        // The version check comes first: a stale publisher writes nothing at all.
        if let ifMatch {
            let current = try await head(key)?.etag ?? ""
            guard current == ifMatch else {
                throw StorageError.preconditionFailed(key: key, expected: ifMatch.isEmpty ? "none" : ifMatch, actual: current.isEmpty ? "none" : current)
            }
        }
        try makeDirectories((destination as NSString).deletingLastPathComponent)
        let file = try AtomicFile(destination: destination)
        try data.withUnsafeBytes { try file.descriptor.writeAll($0) }
        try file.commit(durable: true)
    }

    public func delete(_ key: String) async throws {
        let file = try path(key)
        if unlink(file) != 0 && errno != ENOENT {
            throw ModelCastError.io(operation: "delete", path: file, reason: errnoDescription())
        }
        // Directories the key emptied go too (models/NAME/VERSION/), as on an object store;
        // rmdir refuses any that still hold something.
        var parts = key.split(separator: "/").dropLast()
        while !parts.isEmpty, rmdir(root + "/" + parts.joined(separator: "/")) == 0 {
            parts = parts.dropLast()
        }
    }

    /// Takes the target's publish lock (a `flock` on the directory itself, so no
    /// lock file ends up on the host): two publishes to one directory run one after
    /// the other instead of interleaving.
    public func lock() throws -> DirectoryLock {
        try makeDirectories(root)
        return try DirectoryLock(path: root)
    }

    /// Removes what a killed publish left in the staging directory. Call with the
    /// lock held: then no other publish can be using it.
    public func removeStaleStaging() {
        let directory = root + "/" + Self.stagingName
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
            unlink(directory + "/" + name)
        }
    }

    /// Removes the staging directory if it is empty.
    public func cleanUpStaging() {
        rmdir(root + "/" + Self.stagingName)
    }
}

/// `mkdir -p`.
func makeDirectories(_ path: String) throws {
    do {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    } catch {
        throw ModelCastError.io(operation: "create directory", path: path, reason: (error as NSError).localizedFailureReason ?? error.localizedDescription)
    }
}

/// An exclusive `flock` held until the value goes away.
public final class DirectoryLock {
    private let fd: Int32

    init(path: String) throws {
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw ModelCastError.io(operation: "open lock file", path: path, reason: errnoDescription()) }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            FileHandle.standardError.write(Data("waiting for another publish to \(path) to finish…\n".utf8))
            guard flock(fd, LOCK_EX) == 0 else {
                let reason = errnoDescription()
                Glibc.close(fd)
                throw ModelCastError.io(operation: "lock", path: path, reason: reason)
            }
        }
    }

    deinit {
        flock(fd, LOCK_UN)
        Glibc.close(fd)
    }
}
