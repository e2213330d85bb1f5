import Foundation
import ModelCastFormat

/// The files a publish is about to store, made ready before anything is written: each
/// model packed (a file as it is, a directory zipped) or, for a tree, every file under its
/// content-addressed key. What the store takes over is `consumed`; `close` removes every
/// staged copy it did not take (never the user's own files, which are uploaded in place).
final class StagingArea {
    private let storage: any Storage
    private let request: PublishRequest
    /// nil for a dry run: files are only hashed.
    private let directory: String?
    /// Key → the artifact to store.
    private(set) var staged: [String: StagedArtifact] = [:]
    /// Tree files the target already holds under their key (stored by an earlier
    /// version): never uploaded again, proven instead. Key → the local file.
    private(set) var stored: [String: String] = [:]
    /// The segment indexes of this release's artifacts, by the index's key (dry runs too).
    private(set) var segmentIndexes: [String: SegmentIndex] = [:]
    /// With model signing: the files of each zipped directory, hashed as they were zipped,
    /// by the zip's key (what the signature states of them; `ModelSignatures`).
    private(set) var zippedFileDigests: [String: [String: SHA256Digest]] = [:]
    /// The tree files the live release names, by key: a file with the same key, size and
    /// SHA-256 is stored already (the live record, checked against the store, proves it —
    /// or proveStored re-reads it with --reverify-stored), so no request asks the store.
    private let liveTreeFiles: [String: ReleaseFile]
    /// The size and path (`SIZE:PATH`) of every tree file the live release names: a file
    /// found there again is most likely unchanged, so it is hashed first and copied only if not.
    private let liveTreePlaces: Set<String>

    /// True when artifacts are hashed where they are and copied only if a key must be
    /// stored (`materialize`): a publish of the versions already live (unchanged, or a
    /// change of metadata only) stores no new artifact, so it needs no room for a copy.
    private let hashOnly: Bool
    /// The zipped directories hashed but not packed (`hashOnly`), by key: packed only if stored.
    private var unpacked: [String: ModelDescription] = [:]

    init(storage: any Storage, dryRun: Bool, request: PublishRequest, live: Release? = nil) throws {
        self.storage = storage
        self.request = request
        directory = dryRun ? nil : try storage.capabilities.staging.directory()
        // A network store uploads plain files in place already, and proves a multipart
        // object against the staged zip: only a directory target hashes in place.
        hashOnly = directory != nil && !storage.capabilities.uploadsInPlace && Self.republishesLiveVersions(request, live: live)
        var liveTreeFiles: [String: ReleaseFile] = [:]
        var liveTreePlaces = Set<String>()
        for object in live?.objects(in: [.release]) ?? [] {
            guard object.kind == .artifact, let file = object.artifact, let path = file.path else { continue }
            liveTreeFiles[file.key] = file
            liveTreePlaces.insert(Self.place(path: path, size: file.size))
        }
        self.liveTreeFiles = liveTreeFiles
        self.liveTreePlaces = liveTreePlaces
    }

    /// Every local file behind a key of this release: staged copies and stored tree files.
    var localFiles: [String: String] {
        staged.mapValues(\.result.path).merging(stored) { staged, _ in staged }
    }

    /// The store took the artifact under `key` over: it is no longer ours to remove.
    func consumed(_ key: String) {
        staged[key] = nil
    }

    /// Removes what was staged and not consumed, and lets the store finish its staging.
    func close() {
        guard directory != nil else { return }
        for artifact in staged.values where !artifact.inPlace {
            unlink(artifact.result.path)
            Interrupts.shared.unregisterTemporary(artifact.result.path)
        }
        staged = [:]
        storage.capabilities.staging.finish()
    }

    /// True when every unit of `request` is published at the version the live release
    /// has it: a version keeps its files for good (`checkVersionsKeepTheirFiles`), so
    /// such a publish stores no artifact the target does not hold already.
    static func republishesLiveVersions(_ request: PublishRequest, live: Release?) -> Bool {
        guard let units = live?.unitsByLabel else { return false }
        let given = request.models.flatMap(\.units)
        guard !given.isEmpty, given.allSatisfy({ units[$0.name]?.version == $0.version }) else { return false }
        return request.prototypes.map { $0.version == live?.prototypes?.version } ?? true
    }

    /// The artifact to store under `key` when the store lacks it: staged already, or (a
    /// zipped directory only hashed) packed now. nil when this run has no bytes for the key.
    func materialize(_ key: String) throws -> StagedArtifact? {
        if let artifact = staged[key] { return artifact }
        guard let description = unpacked[key], let directory else { return nil }
        let segments = request.options.segmentIndexes.applies(size: description.totalSize, profile: request.profile)
        let result = try Packer().stage(description, in: directory, compression: request.compression, progress: request.progress, segments: segments)
        let artifact = StagedArtifact(result: result, inPlace: false)
        staged[key] = artifact
        unpacked[key] = nil
        return artifact
    }

    /// Stages `model` (its files, already described) and returns its release entry.
    func add(_ model: PublishRequest.Model, descriptions: [ModelDescription]) async throws -> ReleaseModel {
        model.layout == .tree ? try await addTree(model, description: descriptions[0]) : try addPacked(model, descriptions: descriptions)
    }

    /// A model of files and zipped directories, each under `models/NAME/VERSION/FILE`
    /// (or the profile's own key).
    private func addPacked(_ model: PublishRequest.Model, descriptions: [ModelDescription]) throws -> ReleaseModel {
        var files: [ReleaseFile] = []
        var names = Set<String>()
        for description in descriptions {
            let packer = Packer()
            // A plain file going to a network store is uploaded from where it is: no copy.
            // Hashing only, a plain file is copied from where it is if it must be stored.
            let uploadInPlace = (storage.capabilities.uploadsInPlace || hashOnly) && !description.isDirectory
            // Parts a multipart upload will send are hashed in this same pass (a zip's size
            // is close to its files' total; when it lands on the other side of the
            // threshold the store hashes the parts itself).
            let parts = directory == nil ? nil : storage.capabilities.multipart?.plan(description.totalSize)
            let segments = request.options.segmentIndexes.applies(size: description.totalSize, profile: request.profile)
            // A signed directory's files are hashed as they are zipped, not read again to sign.
            let entryDigests = request.options.modelSigning != nil && description.isDirectory
            let result = try directory.map {
                uploadInPlace || hashOnly
                    ? try packer.digest(description, compression: request.compression, progress: request.progress, parts: parts,
                                        segments: segments, entryDigests: entryDigests)
                    : try packer.stage(description, in: $0, compression: request.compression, progress: request.progress, parts: parts,
                                       segments: segments, entryDigests: entryDigests)
            } ?? packer.digest(description, compression: request.compression, progress: request.progress, segments: segments, entryDigests: entryDigests)
            guard names.insert(result.name).inserted else {
                throw ModelCastError.usage("model \(model.name) has two files named \(result.name)")
            }
            let key = request.profile.artifactKey(model: model.keyName, version: model.version, fileName: result.name, sha256: result.sha256)
            if let digests = result.entryDigests { zippedFileDigests[key] = digests }
            if hashOnly && description.isDirectory {
                unpacked[key] = description
            } else {
                staged[key] = StagedArtifact(result: result, inPlace: uploadInPlace)
            }
            files.append(ReleaseFile(
                name: result.name, key: key, url: URLParts.url(base: request.baseURL, key: key),
                sha256: result.sha256.hex, size: result.size, contentType: result.contentType,
                segments: try result.segments.map { try stageSegmentIndex($0, of: result, model: model.keyName) }))
        }
        return ReleaseModel(version: model.version, files: files, meta: model.meta)
    }

    /// The segment index of an artifact, staged (for a dry run, only described) beside it:
    /// an immutable object named by the artifact's SHA-256.
    private func stageSegmentIndex(_ segments: [SegmentIndex.Segment], of artifact: PackResult, model: String) throws -> SegmentIndexObject {
        let index = try SegmentIndex(scheme: SegmentScheme.name, artifactSize: artifact.size, artifactSHA256: artifact.sha256.bytes, segments: segments)
        let bytes = index.encoded()
        let sha256 = try SHA256Hasher.digest(bytes)
        let key = TargetLayout.segmentIndexKey(model: model, artifact: artifact.sha256)
        segmentIndexes[key] = index
        try stage(bytes, sha256: sha256, key: key, kind: artifact.kind, contentType: SegmentIndexObject.contentType)
        return SegmentIndexObject(key: key, url: URLParts.url(base: request.baseURL, key: key), sha256: sha256.hex, size: Int64(bytes.count))
    }

    /// Stages `bytes` (a segment index, a model signature) to be stored under `key`; for a
    /// dry run, only notes it.
    func stage(_ bytes: [UInt8], sha256: SHA256Digest, key: String, kind: ModelKind, contentType: String) throws {
        guard staged[key] == nil else { return }
        guard let directory else {
            // A dry run writes nothing, but plans to store the object (and says so).
            staged[key] = StagedArtifact(result: PackResult(path: "", name: PathText.lastComponent(key), size: Int64(bytes.count), sha256: sha256,
                                                            kind: kind, files: 0, format: .file, compression: nil, contentType: contentType),
                                         inPlace: true)
            return
        }
        let file = try AtomicFile(destination: directory + "/" + sha256.hex + "." + PathText.lastComponent(key))
        do {
            try bytes.withUnsafeBytes { try file.descriptor.writeAll($0) }
            let result = PackResult(path: try file.keepTemporary(), name: PathText.lastComponent(key), size: Int64(bytes.count), sha256: sha256,
                                    kind: kind, files: 0, format: .file, compression: nil, contentType: contentType)
            staged[key] = StagedArtifact(result: result, inPlace: false)
        } catch {
            file.discard()
            throw error
        }
    }

    /// A directory model published as its files: each regular file under its
    /// content-addressed key. A file whose key the target already holds is not staged or
    /// uploaded again (`stored`: the caller proves it); the others are staged.
    private func addTree(_ model: PublishRequest.Model, description: ModelDescription) async throws -> ReleaseModel {
        // Parts a multipart upload will send are hashed in the listing's read.
        var plan: (@Sendable (Int64) -> PartPlan?)?
        if directory != nil {
            let storage = self.storage
            plan = { storage.capabilities.multipart?.plan($0) }
        }
        // Hashing every file blocks (concurrentPerform over the files): on its own thread.
        let progress = request.progress
        let parts = plan
        let copying = treeCopies()
        let listing = try await onOwnThread("modelcast.tree-listing") {
            try TreeListing.make(description, progress: progress, parts: parts, copies: copying)
        }
        // Copies made while hashing that end up not staged are removed, whatever happens.
        var copies = Set(listing.files.compactMap(\.copy))
        defer { copies.forEach(TreeListing.removeCopy) }
        var files: [ReleaseFile] = []
        for file in listing.files {
            let key = TargetLayout.blobKey(model: model.keyName, sha256: file.sha256)
            if staged[key] == nil, stored[key] == nil {
                if let live = liveTreeFiles[key], live.sha256 == file.sha256.hex, live.size == file.size {
                    stored[key] = file.diskPath
                } else if storage.capabilities.uploadsInPlace {
                    // Nothing is copied for a network store, so no request asks first:
                    // put-if-absent finds a blob stored by an earlier run and proves it.
                    staged[key] = try stageTreeFile(file)
                } else if try await storage.head(key) != nil {
                    stored[key] = file.diskPath
                } else {
                    let artifact = try stageTreeFile(file)
                    copies.remove(artifact.result.path)
                    staged[key] = artifact
                }
            }
            let name = String(file.path.split(separator: "/").last ?? Substring(file.path))
            files.append(ReleaseFile(name: name, key: key, url: URLParts.url(base: request.baseURL, key: key), sha256: file.sha256.hex,
                                     size: file.size, contentType: file.contentType, path: file.path))
        }
        return ReleaseModel(version: model.version, files: files, meta: model.meta, tree: listing.name)
    }

    /// For a target that stores copies (a directory; not a dry run), the tree files to copy
    /// as they are hashed, so each is read once: all but those the live release names at
    /// the same path with the same size (most likely unchanged, stored already: only hashed).
    private func treeCopies() -> TreeListing.Copies? {
        guard let directory, !storage.capabilities.uploadsInPlace else { return nil }
        let live = liveTreePlaces
        return TreeListing.Copies(directory: directory) { path, size in !live.contains(Self.place(path: path, size: size)) }
    }

    private static func place(path: String, size: Int64) -> String { "\(size):\(path)" }

    /// A tree file ready to store: uploaded from where it is by stores that can (and for a
    /// dry run), else the copy the listing made as it hashed the file, else copied into
    /// staging — re-hashed on the way, so a file that changed since it was listed is
    /// refused rather than published under the wrong hash.
    private func stageTreeFile(_ file: TreeListing.File) throws -> StagedArtifact {
        func result(_ path: String, source: FileSnapshot?) -> PackResult {
            PackResult(path: path, name: PathText.lastComponent(file.path), size: file.size, sha256: file.sha256, kind: .file, files: 1,
                       format: .tree, compression: nil, contentType: file.contentType, source: source, parts: file.parts)
        }
        guard let directory, !storage.capabilities.uploadsInPlace else {
            return StagedArtifact(result: result(file.diskPath, source: file.source), inPlace: true)
        }
        // Copied as it was hashed: those very bytes.
        if let copy = file.copy { return StagedArtifact(result: result(copy, source: nil), inPlace: false) }
        let copy = try AtomicFile(destination: directory + "/" + file.sha256.hex)
        do {
            let digest = try StreamDigester.digestFile(at: file.diskPath, copyingTo: copy.descriptor)
            guard digest.size == file.size, digest.sha256 == file.sha256 else {
                throw ModelCastError.io(operation: "stage", path: file.diskPath, reason: "the file changed after it was hashed (now \(digest.size) bytes, sha256 \(digest.sha256.hex); listed \(file.size) bytes, \(file.sha256.hex))")
            }
            return StagedArtifact(result: result(try copy.keepTemporary(), source: nil), inPlace: false)
        } catch {
            copy.discard()
            throw error
        }
    }
}
