import Foundation

/// A local directory as a publish target: the directory is what gets synced to a
/// static host. Objects are written under temporary names and linked or renamed
/// into place, fsynced, so an interrupted publish never leaves a partial object
/// or manifest under a real key.
///
/// Artifacts are staged outside the directory (a private sibling,
/// `PARENT/.modelcast-staging-NAME`), so what a killed publish leaves behind is never
/// uploaded by `aws s3 sync` or `rclone sync` of the target.
package struct DirectoryStorage: Storage {
    /// The target directory (created if missing).
    package let root: String
    /// The staging directory inside the target, used only where the sibling cannot be
    /// (see `stagingDirectory()`); earlier versions always staged there.
    static let stagingName = ".modelcast-staging"
    /// The sibling staging directory is this prefix plus the target's name.
    static let siblingStagingPrefix = ".modelcast-staging-"

    /// Receives notes for the user (waiting for another publish's lock).
    let log: @Sendable (String) -> Void

    package init(root: String, log: @escaping @Sendable (String) -> Void = { _ in }) {
        self.root = root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root
        self.log = log
    }

    package var location: String { root }

    /// A directory stages beside itself, has one writer at a time under its lock, and
    /// receives the hosting files; it has no multipart uploads and no connections.
    package var capabilities: StorageCapabilities {
        StorageCapabilities(
            staging: StagingSpace(directory: { try stagingDirectory() }, finish: { cleanUpStaging() }),
            lock: WriterLock { create in try lockForWriting(create: create) },
            hosting: HostingFolder(root: root, write: { [self] path, content, executable in try writeHostingFile(path, content: content, executable: executable) }),
            multipart: nil, uploadsInPlace: false, requestCounts: nil, close: nil, listSizes: nil)
    }

    /// Writes a hosting file as an object is written: under a temporary name, fsynced, then
    /// renamed into place (a host syncing the directory never reads half a file).
    private func writeHostingFile(_ relativePath: String, content: Data, executable: Bool) throws {
        let destination = try path(relativePath)
        try makeDirectories(PathText.parent(destination))
        let atomic = try AtomicFile(destination: destination)
        try content.withUnsafeBytes { try atomic.descriptor.writeAll($0) }
        if executable { _ = fchmod(atomic.descriptor.fd, 0o755) }
        try ServedFileTime.stamp(atomic.descriptor, replacing: destination)
        try atomic.commit(durable: true)
    }

    /// The version tag of a file: which file (inode), when it last changed, its size.
    private static func etag(_ info: stat) -> String {
        "\(info.st_ino)-\(Platform.modificationTime(info).seconds).\(Platform.modificationTime(info).nanoseconds)-\(info.st_size)"
    }

    private func path(_ key: String) throws -> String {
        try validateKey(key)
        return root + "/" + key
    }

    /// Where artifacts are staged: `PARENT/.modelcast-staging-NAME`, beside the target
    /// on the same file system (storing a staged file is a `link`), created on demand,
    /// mode 0700. Only a directory of our own that no one else can write is used: in a
    /// shared parent (`/tmp`) a name planted by someone else could swap staged bytes.
    ///
    /// Staging falls back to `TARGET/.modelcast-staging` when the target is a mount point
    /// (its parent is on another device, and a link cannot cross file systems), is the
    /// file system root, or the sibling cannot be created or is not ours. `list`, the
    /// hosting files and the upload scripts never name that directory (dot-prefixed, not
    /// an object), but a blind `aws s3 sync` of the target would upload what a killed
    /// publish left there until the next command under the target's lock removes it.
    package func stagingDirectory() throws -> String {
        if let sibling = siblingStaging() {
            if mkdir(sibling, 0o700) != 0 && errno != EEXIST {
                // An unwritable parent: stage inside the target instead.
            } else if Self.isPrivateDirectory(sibling) {
                Interrupts.shared.registerDirectory(sibling)
                return sibling
            }
        }
        try makeDirectories(inTreeStaging)
        Interrupts.shared.registerDirectory(inTreeStaging)
        return inTreeStaging
    }

    private var inTreeStaging: String { root + "/" + Self.stagingName }

    /// `PARENT/.modelcast-staging-NAME` for the target's real path, or nil where staging
    /// must stay inside the target: the target is missing, is `/`, or is a mount point
    /// (another device than its parent). Bind mounts of one file system share a device;
    /// `putIfAbsent` copies a staged file that cannot be linked across one.
    func siblingStaging() -> String? {
        guard let real = realPath(root), real != "/" else { return nil }
        let parent = PathText.parent(real)
        let name = PathText.lastComponent(real)
        var target = stat(), above = stat()
        guard !name.isEmpty, stat(real, &target) == 0, stat(parent, &above) == 0, target.st_dev == above.st_dev else { return nil }
        return (parent == "/" ? "" : parent) + "/" + Self.siblingStagingPrefix + name
    }

    /// A directory (not a link to one) owned by this user that no one else can write.
    static func isPrivateDirectory(_ path: String) -> Bool {
        // One whose status cannot be read is not known to be ours: never staged in nor cleaned.
        guard let info = try? linkStatus(path), case .directory = FileType(mode: info.st_mode) else { return false }
        return info.st_uid == geteuid() && info.st_mode & 0o022 == 0
    }

    package func head(_ key: String) async throws -> ObjectInfo? {
        let file = try path(key)
        guard let info = try linkStatus(file) else { return nil }
        guard case .regular = FileType(mode: info.st_mode) else {
            throw ModelCastError.specialFile(path: file, kind: "not a regular file where an object belongs")
        }
        return ObjectInfo(
            size: Int64(info.st_size), contentType: ContentType.forArtifact(named: key),
            etag: Self.etag(info))
    }

    /// Reads the file back and hashes it (a directory keeps no checksum, so `trustStored`
    /// changes nothing): a regular file only, never through a symbolic link.
    package func proveContent(_ key: String, size: Int64, sha256: SHA256Digest, localFile: String?, trustStored: Bool) async throws -> ContentProof {
        try prove(key, path: try path(key), size: size, sha256: sha256)
    }

    private func prove(_ key: String, path file: String, size: Int64, sha256: SHA256Digest) throws -> ContentProof {
        guard let info = try linkStatus(file) else { throw StorageError.missing(key) }
        guard case .regular = FileType(mode: info.st_mode) else {
            throw ModelCastError.specialFile(path: file, kind: "not a regular file where an object belongs")
        }
        guard Int64(info.st_size) == size else {
            throw StorageError.contentMismatch(key: key, expectedSize: size, expectedSHA256: sha256.hex, actualSize: Int64(info.st_size), actualSHA256: nil, detail: "file size")
        }
        let hashes: FileHashes
        do {
            hashes = try FileHashes.read(file, followLinks: false)
        } catch ModelCastError.notFound {
            throw StorageError.missing(key)
        }
        guard hashes.size == size, hashes.sha256 == sha256 else {
            throw StorageError.contentMismatch(key: key, expectedSize: size, expectedSHA256: sha256.hex, actualSize: hashes.size, actualSHA256: hashes.sha256.hex, detail: "read back and hashed")
        }
        return .hashed
    }

    package func read(_ key: String, range: ClosedRange<Int64>) async throws -> Data {
        let file = try path(key)
        guard range.count <= RangedRead.maximum else { throw StorageError.tooLarge(key: key, size: Int64(range.count), limit: RangedRead.maximum) }
        // Opened without following a link: an object is a regular file.
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.openForReading(file, followLinks: false)
        } catch ModelCastError.notFound {
            throw StorageError.missing(key)
        }
        guard case .regular = FileType(mode: try descriptor.status().st_mode) else {
            throw ModelCastError.specialFile(path: file, kind: "not a regular file where an object belongs")
        }
        return Data(try descriptor.read(at: range.lowerBound, count: range.count))
    }

    /// The etag is of the file opened, so it names exactly the bytes read; the Content-Type
    /// is the one `head` reports (by the key's name), and there is no Cache-Control.
    package func getWithInfo(_ key: String, limit: Int) async throws -> (data: Data, info: ObjectInfo)? {
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
        return (data, ObjectInfo(size: Int64(data.count), contentType: ContentType.forArtifact(named: key), etag: Self.etag(info)))
    }

    package func list(prefix: String) async throws -> [String] {
        var keys: [String] = []
        // Only the folder the prefix names is walked (`channels/` is not the whole tree).
        let folder = prefix.contains("/") ? String(prefix[..<prefix.lastIndex(of: "/")!]) : ""
        if !folder.isEmpty, !isValidKey(folder) { return [] }
        let start = folder.isEmpty ? root : root + "/" + folder
        guard let enumerator = FileManager.default.enumerator(atPath: start) else { return [] }
        while let below = enumerator.nextObject() as? String {
            let relative = folder.isEmpty ? below : folder + "/" + below
            if relative.hasPrefix(".") || relative.contains("/.") { continue }  // staging and temporary files
            var isDirectory: ObjCBool = false
            if relative.hasPrefix(prefix), FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isDirectory), !isDirectory.boolValue {
                keys.append(relative)
            }
        }
        return keys.sorted()
    }

    package func putIfAbsent(_ key: String, _ body: PutBody) async throws -> PutOutcome {
        switch body {
        case .staged(let staged): return try putStaged(key, staged)
        case .bytes(let data, let metadata): return try putBytes(key, data, metadata)
        }
    }

    private func putStaged(_ key: String, _ staged: StagedObject) throws -> PutOutcome {
        let destination = try path(key)
        defer {
            if staged.isTemporary {
                unlink(staged.path)
                Interrupts.shared.unregisterTemporary(staged.path)
            }
        }
        // The user's own file is copied before it is linked: where the key is taken already
        // (writers take turns here), the stored bytes are compared instead, with no copy.
        if !staged.isTemporary, try linkStatus(destination) != nil {
            return try compareExisting(key: key, path: destination, size: staged.metadata.size, sha256: staged.metadata.sha256)
        }
        try makeFolders(for: destination)
        var code = EXDEV
        if staged.isTemporary {
            let staging = try FileDescriptor.openForReading(staged.path)
            try staging.sync()
            // link(2) fails if the key exists: an atomic put-if-absent, never an overwrite.
            if link(staged.path, destination) == 0 {
                syncDirectory(of: destination)
                Interrupts.shared.registerUncommitted(destination)
                return .created
            }
            code = errno
        }
        if code == EXDEV {
            // The user's own file (a link to it would change whenever it does), or a staged
            // file on another mount of the same file system (a bind mount has its file
            // system's device, so stagingDirectory() could not tell): copy it beside the
            // key, checking the copy hashes as staged, and link that.
            let copy = try AtomicFile(destination: destination)
            let digest = try StreamDigester.digestFile(at: staged.path, copyingTo: copy.descriptor)
            guard digest.size == staged.metadata.size, digest.sha256 == staged.metadata.sha256 else {
                copy.discard()
                throw ModelCastError.io(operation: "store", path: destination, reason: "the staged file \(staged.path) changed: \(digest.size) bytes, sha256 \(digest.sha256.hex), staged as \(staged.metadata.size) bytes, sha256 \(staged.metadata.sha256.hex)")
            }
            try copy.descriptor.sync()
            let linked = link(copy.temporaryPath, destination) == 0
            code = errno
            copy.discard()
            if linked {
                syncDirectory(of: destination)
                Interrupts.shared.registerUncommitted(destination)
                return .created
            }
        }
        guard code == EEXIST else {
            throw ModelCastError.io(operation: "store", path: destination, reason: errnoDescription(code))
        }
        return try compareExisting(key: key, path: destination, size: staged.metadata.size, sha256: staged.metadata.sha256)
    }

    /// Makes the folders `destination` needs; the ones made here are removed if the run is
    /// interrupted before its commit (with the object, when nothing else is in them).
    private func makeFolders(for destination: String) throws {
        var missing: [String] = []
        var folder = PathText.parent(destination)
        // A folder whose status cannot be read counts as missing: making it fails, naming it.
        while folder.count > root.count, (try? linkStatus(folder)) == nil {
            missing.append(folder)
            folder = PathText.parent(folder)
        }
        try makeDirectories(PathText.parent(destination))
        for made in missing.reversed() { Interrupts.shared.registerUncommitted(made) }
    }

    private func putBytes(_ key: String, _ data: Data, _ metadata: ObjectMetadata) throws -> PutOutcome {
        let destination = try path(key)
        try makeDirectories(PathText.parent(destination))
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
        do {
            _ = try prove(key, path: path, size: size, sha256: sha256)
            return .unchanged
        } catch StorageError.contentMismatch(_, _, _, let actualSize, let actualSHA256, _) {
            throw StorageError.conflict(key: key, existingSize: actualSize, newSize: size, existingSHA256: actualSHA256, newSHA256: sha256.hex)
        } catch StorageError.missing {
            throw ModelCastError.io(operation: "store", path: path, reason: "it appeared and disappeared again while storing: something else is writing the target")
        }
    }

    package func replace(_ key: String, data: Data, metadata: ObjectMetadata, ifMatch: String?) async throws {
        let destination = try path(key)
        // The version check comes first: a stale publisher writes nothing at all.
        if let ifMatch {
            let current = try await head(key)?.etag ?? ""
            guard current == ifMatch else {
                throw StorageError.preconditionFailed(key: key, expected: ifMatch.isEmpty ? "none" : ifMatch, actual: current.isEmpty ? "none" : current)
            }
        }
        try makeDirectories(PathText.parent(destination))
        let file = try AtomicFile(destination: destination)
        try data.withUnsafeBytes { try file.descriptor.writeAll($0) }
        try ServedFileTime.stamp(file.descriptor, replacing: destination)
        try file.commit(durable: true)
    }

    package func delete(_ key: String) async throws {
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

    /// The lock, taken after stale staging is cleared; nil when the directory is missing
    /// and `create` is false (commands on what is published leave a missing one missing).
    package func lockForWriting(create: Bool) throws -> (any StorageLock)? {
        if !create, (try linkStatus(root)) == nil { return nil }
        let lock = try lock()
        removeStaleStaging()
        removeStaleTemporaryFiles()
        return lock
    }

    /// Removes the temporary files a killed command left beside what it was writing
    /// (`.NAME.modelcast-PID-RANDOM.tmp`, `AtomicFile`'s names) anywhere in the target, so
    /// a sync of the directory never uploads one. Call with the lock held: no other
    /// modelcast command is writing there then. Nothing else is touched, links are not followed.
    package func removeStaleTemporaryFiles() {
        guard let walker = FileManager.default.enumerator(atPath: root) else { return }
        while let relative = walker.nextObject() as? String {
            let name = PathText.lastComponent(relative)
            // Best effort: a file that cannot be examined is left, as anything not surely ours.
            guard AtomicFile.isTemporaryName(name), let info = try? linkStatus(root + "/" + relative),
                  case .regular = FileType(mode: info.st_mode) else { continue }
            unlink(root + "/" + relative)
        }
    }

    /// Takes the target's publish lock (a `flock` on the directory itself, so no
    /// lock file ends up on the host): two publishes to one directory run one after
    /// the other instead of interleaving.
    package func lock() throws -> DirectoryLock {
        try makeDirectories(root)
        return try DirectoryLock(path: root) { [log, root] in log("waiting for another publish to \(root) to finish…") }
    }

    /// Removes what a killed publish left in the staging directories (the sibling, and
    /// the one inside the target: the fallback, and where earlier versions staged), and
    /// the directories themselves (`stagingDirectory()` makes them again when needed).
    /// Call with the lock held: then no other publish can be using them.
    package func removeStaleStaging() {
        for directory in stagingDirectories() {
            // Best effort: a directory that cannot be listed keeps its files (and stays, as
            // rmdir fails); their dot names keep them from being served, and the next run
            // holding the lock tries again.
            for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
                unlink(directory + "/" + name)
            }
            rmdir(directory)
        }
    }

    /// Removes the staging directories that are empty.
    package func cleanUpStaging() {
        for directory in stagingDirectories() { rmdir(directory) }
    }

    /// The staging directories there are: the sibling only if it is ours (never through a link).
    private func stagingDirectories() -> [String] {
        var directories: [String] = []
        if let sibling = siblingStaging(), Self.isPrivateDirectory(sibling) { directories.append(sibling) }
        // One whose status cannot be read is left alone, as one that is not there.
        if let info = try? linkStatus(inTreeStaging), case .directory = FileType(mode: info.st_mode) { directories.append(inTreeStaging) }
        return directories
    }
}

/// An exclusive `flock` held until the value goes away.
package final class DirectoryLock: StorageLock {
    private let fd: Int32

    /// `onWait` runs when another process holds the lock, before waiting for it.
    init(path: String, onWait: () -> Void = {}) throws {
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw ModelCastError.io(operation: "open lock file", path: path, reason: errnoDescription()) }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            onWait()
            guard flock(fd, LOCK_EX) == 0 else {
                let reason = errnoDescription()
                _ = Platform.close(fd)
                throw ModelCastError.io(operation: "lock", path: path, reason: reason)
            }
        }
    }

    deinit {
        flock(fd, LOCK_UN)
        _ = Platform.close(fd)
    }

    /// True while a process holds the lock on the directory `path` (a command is writing
    /// there). Probes with a shared lock, released at once: a command starting in that
    /// instant waits that long.
    package static func isHeld(path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { _ = Platform.close(fd) }
        guard flock(fd, LOCK_SH | LOCK_NB) != 0 else {
            flock(fd, LOCK_UN)
            return false
        }
        return errno == EWOULDBLOCK
    }
}
