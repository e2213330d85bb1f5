import Foundation
import ModelCastFormat

/// How a command that makes a release live proves the objects it names (`Release.objects`:
/// artifacts, segment indexes and model signatures, of the release and of its rollback
/// section). Every go-live command ends in `planCommit`, which proves each object the run
/// does not store itself; a publish proves the rest as it stores them (put-if-absent), and
/// takes over the live release's artifacts checked present with their size (`confirmPresent`).
extension Publisher {
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
}
