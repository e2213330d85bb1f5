import Foundation
import ModelCastFormat

/// How a command that makes a release live proves the objects it names (`Release.objects`:
/// artifacts, segment indexes and model signatures, of the release and of its rollback
/// section). Every go-live command ends in `Committer.planCommit`, which proves each object
/// the run does not store itself; a publish proves the rest as it stores them
/// (put-if-absent), and takes over the live release's artifacts checked present with their
/// size (`confirmPresent`).
struct ObjectProofs: TargetWriting {
    let writer: TargetWriter

    /// Stored objects proven at once by `proveStored`.
    static let concurrentProofs = 8

    /// Proves every object in `objects` (`proveStored`); one that is missing or holds other
    /// bytes stops the command before anything goes live, named by what it is to devices.
    func proveObjects(_ objects: [ReleaseObject], trustStored: Bool) async throws {
        do {
            try await proveStored(objects, localFiles: [:], trustStored: trustStored)
        } catch let error as StorageError {
            guard let key = error.key, let object = objects.first(where: { $0.key == key }) else { throw error }
            throw Self.unproven(object, error: error, location: storage.location)
        }
    }

    /// The refusal for an object a release names that the store does not hold as named.
    static func unproven(_ object: ReleaseObject, error: StorageError, location: String) -> ModelCastError {
        let what: String
        if case .missing = error { what = "is missing from the target" } else { what = "does not hold the bytes the release names (\(error))" }
        let remedy: String
        switch object.kind {
        case .artifact:
            remedy = "devices would fail to download it. Put the file back under that key (\(object.size) bytes, sha256 \(object.sha256)), or publish \(object.unit) \(object.version) again from the same input while it is the live version"
        case .segmentIndex:
            remedy = "devices updating by delta would fail to fetch it. Publishing the same file again (any version: the index is named by the file's SHA-256) stores it anew"
        case .modelSignature:
            remedy = "devices that pin the model-signing key would refuse \(object.unit) \(object.version). Publish it again with --model-signing-key to sign it anew"
        }
        return .targetState("\(location)/\(object.key) (\(object.label)) \(what): nothing went live; \(remedy)")
    }

    /// Artifacts the live release names with these very bytes, taken over by a publish that
    /// changes something else: each must be present with its size (and the store's own
    /// checksum where it keeps one), so a deleted or truncated one never goes live again.
    /// More than one object on a store that lists sizes (a catalog's, on S3) is checked
    /// against one listing of their common folder: a few requests whatever the catalog's size.
    func confirmPresent(_ objects: [ReleaseObject]) async throws {
        let storage = self.storage
        // What the store says of each key: its size, and its own SHA-256 where a HEAD gives one.
        let found: [String: (size: Int64, sha256: String?)]
        if objects.count > 1, let listSizes = storage.capabilities.listSizes {
            found = try await listSizes(Self.commonFolder(of: objects.map(\.key))).mapValues { ($0, nil) }
        } else {
            let heads = try await boundedMap(objects, concurrency: Self.concurrentProofs) { try await storage.head($0.key) }
            found = Dictionary(zip(objects, heads).compactMap { object, info in info.map { (object.key, ($0.size, $0.sha256?.hex)) } },
                               uniquingKeysWith: { first, _ in first })
        }
        for object in objects {
            guard let stored = found[object.key] else { throw Self.unproven(object, error: .missing(object.key), location: storage.location) }
            guard stored.size == object.size, stored.sha256 == nil || stored.sha256 == object.sha256 else {
                throw Self.unproven(object, error: .contentMismatch(key: object.key, expectedSize: object.size, expectedSHA256: object.sha256,
                                                                    actualSize: stored.size, actualSHA256: stored.sha256, detail: "what the store reports"),
                                    location: storage.location)
            }
        }
    }

    /// The deepest folder (ending in `/`, or empty) holding every one of `keys`.
    static func commonFolder(of keys: [String]) -> String {
        guard var common = keys.first.map({ Substring($0) }) else { return "" }
        for key in keys.dropFirst() {
            common = common.prefix(zip(common, key).prefix { $0 == $1 }.count)
        }
        guard let slash = common.lastIndex(of: "/") else { return "" }
        return String(common[...slash])
    }

    /// An unchanged publish: every object the live release names is proven (the files this
    /// run packed against its own copies), and one that is missing while this run has its
    /// bytes (an artifact, a segment index) is stored again, so publishing the same input
    /// repairs what was lost. Other bytes under a key are refused, naming the object.
    func confirmUnchanged(_ live: Release, staging: StagingArea, trustStored: Bool) async throws {
        let objects = live.objects
        let proofs = try await proofs(of: objects, localFiles: staging.localFiles, trustStored: trustStored)
        for (object, failure) in zip(objects, proofs) {
            guard let failure else { continue }
            guard case StorageError.missing = failure, let artifact = try staging.materialize(object.key) else {
                if let error = failure as? StorageError { throw Self.unproven(object, error: error, location: storage.location) }
                throw failure
            }
            let result = artifact.result
            let metadata = ObjectMetadata(cacheControl: CachePolicy.immutable, contentType: object.contentType, size: result.size, sha256: result.sha256)
            guard result.sha256.hex == object.sha256, result.size == object.size else { throw Self.unproven(object, error: .missing(object.key), location: storage.location) }
            _ = try await storage.putIfAbsent(object.key, staged: StagedObject(
                path: result.path, metadata: metadata, isTemporary: !artifact.inPlace, source: result.source, parts: result.parts))
            staging.consumed(object.key)
            log("restored \(storage.location)/\(object.key) (\(object.label)): the live release names it and it was missing")
        }
    }

    /// Proves each stored object in `files` holds the bytes its record says (the store's own
    /// checksum, or hashing), so a damaged or replaced object never goes live again.
    /// `localFiles`: a local copy of a key's bytes, where the run has one.
    /// The proofs run `Self.concurrentProofs` at a time (most are one HEAD, so a catalog of
    /// many models is proven in a few round trips); a failure is reported for the first
    /// file, in order, that failed.
    func proveStored(_ files: [some StoredObjectFacts], localFiles: [String: String], trustStored: Bool) async throws {
        if let failure = try await proofs(of: files, localFiles: localFiles, trustStored: trustStored).lazy.compactMap({ $0 }).first {
            throw failure
        }
    }

    /// Proves each of `files` (`Storage.proveContent`), `concurrentProofs` at a time, saying
    /// where `--trust-stored` accepted a size; returns, in order, each file's failure or nil.
    func proofs(of files: [some StoredObjectFacts], localFiles: [String: String], trustStored: Bool) async throws -> [(any Error)?] {
        var digests: [SHA256Digest] = []
        for file in files {
            guard let digest = SHA256Digest(hex: file.sha256) else {
                throw ModelCastError.targetState("the history names \(storage.location)/\(file.key) with an invalid sha256 '\(file.sha256)'")
            }
            digests.append(digest)
        }
        let storage = self.storage
        let proofs = await boundedMap(Array(zip(files, digests)), concurrency: Self.concurrentProofs, nonThrowing: { file, digest -> Result<ContentProof, any Error> in
            do {
                return .success(try await storage.proveContent(file.key, size: file.size, sha256: digest, localFile: localFiles[file.key], trustStored: trustStored))
            } catch {
                return .failure(error)
            }
        })
        return zip(files, proofs).map { file, proof in
            switch proof {
            case .success(.trustedSize):
                log("warning: \(storage.location)/\(file.key) has no SHA-256 checksum in the store; --trust-stored accepted its size without reading it")
                return nil
            case .success: return nil
            case .failure(let error): return error
            }
        }
    }

    /// HEADs a stored object and compares what the store reports with what was published.
    static func checkStored(_ key: String, expected: ObjectMetadata, storage: any Storage) async throws {
        let place = "\(storage.location)/\(key)"
        guard let info = try await storage.head(key) else {
            throw ModelCastError.io(operation: "check stored object", path: place, reason: "missing after upload")
        }
        if let problem = info.difference(from: expected) {
            throw ModelCastError.io(operation: "check stored object", path: place, reason: problem)
        }
    }
}

/// What proving a stored object needs: its key, size and SHA-256 as a release names them.
protocol StoredObjectFacts: Sendable {
    var key: String { get }
    var size: Int64 { get }
    var sha256: String { get }
}

extension ReleaseFile: StoredObjectFacts {}
extension ReleaseObject: StoredObjectFacts {}

extension StorageError {
    /// The key the error is about, where it names one.
    var key: String? {
        switch self {
        case .conflict(let key, _, _, _, _), .preconditionFailed(let key, _, _), .tooLarge(let key, _, _), .missing(let key),
             .contentMismatch(let key, _, _, _, _, _):
            return key
        case .invalidKey: return nil
        }
    }
}
