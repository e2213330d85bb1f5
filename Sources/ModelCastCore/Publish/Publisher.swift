import Foundation

/// What a publish did (or, with dry run, would do).
public struct PublishReport: Codable, Sendable {
    /// One object written (or found already in place).
    public struct Object: Codable, Sendable, Equatable {
        public let key: String
        public let role: String
        public let outcome: String
        public let size: Int64
        public let sha256: String
    }

    public let target: String
    public let profile: String
    /// True when the target already held exactly this release: nothing was written.
    public let unchanged: Bool
    public let dryRun: Bool
    public let sequence: Int64
    public let previousSequence: Int64?
    public let manifestKey: String
    public let manifestURL: String
    public let objects: [Object]
    public let warnings: [String]
    /// The manifest as published (or as it would be).
    public let manifest: String
    /// Requests sent to a network store, by HTTP method.
    public var requests: [String: Int]?

    enum CodingKeys: String, CodingKey {
        case target, profile, unchanged, sequence, objects, warnings, manifest, requests
        case dryRun = "dry_run", previousSequence = "previous_sequence", manifestKey = "manifest_key", manifestURL = "manifest_url"
    }
}

/// A failure after the manifest write was attempted.
enum PublishFailure: Error {
    case manifestNotWritten(underlying: Error)
}

/// Publishes releases to a `Storage`: packs every model, stores the artifacts under
/// immutable keys, keeps a history record, writes the hosting files, and replaces
/// the manifest last. Nothing a device can fetch ever names a missing object.
public struct Publisher: Sendable {
    public let storage: any Storage
    /// Receives warnings and progress lines (the CLI prints them to standard error).
    public let log: @Sendable (String) -> Void

    /// Largest manifest or history record modelcast reads back.
    static let recordLimit = 16 << 20

    /// Runs after every artifact is stored and checked, before the history record
    /// and the manifest are written; throwing stops the publish with nothing live changed.
    public let beforeManifest: (@Sendable (Data) async throws -> Void)?

    public init(storage: any Storage, log: @escaping @Sendable (String) -> Void = { _ in }, beforeManifest: (@Sendable (Data) async throws -> Void)? = nil) {
        self.storage = storage
        self.log = log
        self.beforeManifest = beforeManifest
    }

    /// HEADs a stored object and compares what the store reports with what was published.
    static func checkStored(_ key: String, expected: ObjectMetadata, storage: any Storage) async throws {
        let place = "\(storage.location)/\(key)"
        guard let info = try await storage.head(key) else {
            throw ModelCastError.io(operation: "check stored object", path: place, reason: "missing after upload")
        }
        guard info.size == expected.size else {
            throw ModelCastError.io(operation: "check stored object", path: place, reason: "\(info.size) bytes, expected \(expected.size)")
        }
        if let sha = info.sha256, sha != expected.sha256 {
            throw ModelCastError.io(operation: "check stored object", path: place, reason: "sha256 \(sha.hex), expected \(expected.sha256.hex)")
        }
        if let cacheControl = info.cacheControl, cacheControl != expected.cacheControl {
            throw ModelCastError.io(operation: "check stored object", path: place, reason: "Cache-Control '\(cacheControl)', expected '\(expected.cacheControl)'")
        }
        if let contentType = info.contentType, mediaType(contentType) != mediaType(expected.contentType) {
            throw ModelCastError.io(operation: "check stored object", path: place, reason: "Content-Type '\(contentType)', expected '\(expected.contentType)'")
        }
    }

    /// The history key for a manifest key and sequence: `manifests/00000042.json`
    /// for `manifest.json`, `manifests/<stem>/00000042.json` for any other manifest.
    public static func historyPrefix(manifestKey: String) -> String {
        manifestKey == "manifest.json" ? "manifests/" : "manifests/" + String(manifestKey.dropLast(".json".count)) + "/"
    }

    static func historyKey(manifestKey: String, sequence: Int64) -> String {
        historyPrefix(manifestKey: manifestKey) + String(format: "%08lld", sequence) + ".json"
    }

    /// Every release in the target's history, oldest first.
    public func history(manifestKey: String) async throws -> [Release] {
        let prefix = Self.historyPrefix(manifestKey: manifestKey)
        var releases: [Release] = []
        for key in try await storage.list(prefix: prefix) {
            let name = key.dropFirst(prefix.count)
            guard name.hasSuffix(".json"), !name.contains("/"), Int64(name.dropLast(5)) != nil else { continue }
            guard let data = try await storage.get(key, limit: Self.recordLimit) else { continue }
            releases.append(try Release.decode(data, source: "\(storage.location)/\(key)"))
        }
        return releases.sorted { $0.sequence < $1.sequence }
    }

    /// Publishes `request`. Bad input fails before the target is touched; a failure
    /// while storing removes what this run created and leaves the live manifest as it was.
    public func publish(_ request: PublishRequest) async throws -> PublishReport {
        try request.validate()
        var warnings: [String] = []
        func warn(_ text: String) {
            warnings.append(text)
            log("warning: " + text)
        }
        if request.baseURL.lowercased().hasPrefix("http://") {
            warn("base URL \(request.baseURL) is plain http: iOS App Transport Security refuses it outside local testing")
        }

        // Inspect every input before anything is written: a bad model fails here.
        var descriptions: [String: [ModelDescription]] = [:]
        for model in request.models + (request.prototypes.map { [$0] } ?? []) {
            descriptions[model.name] = try model.files.map { try ModelInspector.describe($0) }
        }

        let lock = request.dryRun ? nil : try (storage as? DirectoryStorage)?.lock()
        defer { withExtendedLifetime(lock) {} }
        if lock != nil { (storage as? DirectoryStorage)?.removeStaleStaging() }
        let history = try await history(manifestKey: request.manifestKey)
        let liveManifest = try await storage.head(request.manifestKey)
        let liveData = liveManifest == nil ? nil : try await storage.get(request.manifestKey, limit: Self.recordLimit)
        // The live release is the record whose rendering is the live manifest: a
        // publish that failed after writing its record never went live. A manifest
        // matching no record (edited by hand) counts as the newest record.
        let liveRecord = liveData.flatMap { data in history.last { Self.rendering(of: $0) == data } }
        let live = liveRecord ?? (liveData == nil ? nil : history.last)

        // Versions: never lower, never the same version with other bytes.
        for model in request.models {
            guard let previous = live?.models[model.name] else { continue }
            let new = SemanticVersion(model.version)!
            guard let old = SemanticVersion(previous.version) else { continue }
            if new < old {
                throw ModelCastError.usage("version \(model.version) of model \(model.name) is lower than the live version \(previous.version); to go back, use rollback")
            }
            if new > old, Array(model.version.utf8).lexicographicallyPrecedes(Array(previous.version.utf8)) {
                warn("version \(model.version) of model \(model.name) sorts below the live \(previous.version) as a plain string: clients that compare version strings with > (the tiers profile's) will not update")
            }
        }

        // Pack (or, for a dry run, only hash) every file.
        let staging = request.dryRun ? nil : try storage.stagingDirectory()
        var staged: [String: PackResult] = [:]  // key -> packed artifact
        // A plain file going to a network store is uploaded from where it is: no copy.
        var inPlace = Set<String>()
        defer {
            for (key, result) in staged where staging != nil && !inPlace.contains(key) {
                unlink(result.path)
                TemporaryFiles.shared.unregister(result.path)
            }
            (storage as? DirectoryStorage)?.cleanUpStaging()
        }
        func releaseModel(_ model: PublishRequest.Model) throws -> ReleaseModel {
            var files: [ReleaseFile] = []
            var names = Set<String>()
            for description in descriptions[model.name]! {
                let packer = Packer()
                let uploadInPlace = !(storage is DirectoryStorage) && !description.isDirectory
                let result = try staging.map {
                    uploadInPlace
                        ? try packer.digest(description, compression: request.compression, showProgress: request.showProgress)
                        : try packer.stage(description, in: $0, compression: request.compression, showProgress: request.showProgress)
                } ?? packer.digest(description, compression: request.compression, showProgress: request.showProgress)
                guard names.insert(result.name).inserted else {
                    throw ModelCastError.usage("model \(model.name) has two files named \(result.name)")
                }
                let key = request.profile.artifactKey(model: model.name, version: model.version, fileName: result.name, sha256: result.sha256)
                staged[key] = result
                if uploadInPlace { inPlace.insert(key) }
                files.append(ReleaseFile(
                    name: result.name, key: key, url: Self.url(base: request.baseURL, key: key),
                    sha256: result.sha256.hex, size: result.size, contentType: result.contentType))
            }
            return ReleaseModel(version: model.version, files: files, meta: model.meta)
        }
        var models: [String: ReleaseModel] = [:]
        for model in request.models { models[model.name] = try releaseModel(model) }
        let prototypes = try request.prototypes.map(releaseModel)

        for (name, model) in models {
            if let previous = live?.models[name], previous.version == model.version,
               previous.files.map(\.sha256) != model.files.map(\.sha256) || previous.files.map(\.name) != model.files.map(\.name) {
                throw ModelCastError.usage("version \(model.version) of model \(name) is already published with different files; publish a new version instead")
            }
        }

        let rollback = live.map { ReleaseRollback(sequence: $0.sequence, models: $0.models) }
        let release = Release(
            sequence: (history.last?.sequence ?? 0) + 1, publishedAt: Self.timestamp(request.publishedAt),
            channel: request.channel, profile: request.profile.rawValue, minAppVersion: request.minAppVersion,
            meta: request.meta, models: models, prototypes: prototypes, rollback: rollback)
        let rendered = try request.profile.render(release).serialized()

        if let live = liveRecord, live.sameContent(as: release) {
            // Same bytes, same metadata, and that release is live: nothing to do, nothing is written.
            let liveText = liveData.map { String(decoding: $0, as: UTF8.self) } ?? ""
            return PublishReport(
                target: storage.location, profile: request.profile.rawValue, unchanged: true, dryRun: request.dryRun,
                sequence: live.sequence, previousSequence: live.sequence, manifestKey: request.manifestKey,
                manifestURL: Self.url(base: request.baseURL, key: request.manifestKey), objects: [], warnings: warnings,
                manifest: liveText, requests: storage.requestCounts)
        }
        if request.profile == .nomlens, models.values.first?.files.first?.contentType == "application/zip" {
            warn("the nomlens client saves the download as-is; a zipped .mlpackage needs an unzip step in the app")
        }

        let historyKey = Self.historyKey(manifestKey: request.manifestKey, sequence: release.sequence)
        let historyData = Data(release.jsonValue().serialized().utf8)
        let manifestData = Data(rendered.utf8)
        let historyMetadata = ObjectMetadata(cacheControl: CachePolicy.immutable, contentType: "application/json", size: Int64(historyData.count), sha256: try SHA256Hasher.digest(historyData))
        let manifestMetadata = ObjectMetadata(cacheControl: request.manifestCacheControl, contentType: "application/json", size: Int64(manifestData.count), sha256: try SHA256Hasher.digest(manifestData))

        // Upload order: artifacts, history record, manifest — manifest last.
        let artifactKeys = staged.keys.sorted()
        var objects: [PublishReport.Object] = []
        var created: [String] = []
        do {
            for key in artifactKeys {
                let result = staged[key]!
                let metadata = ObjectMetadata(cacheControl: CachePolicy.immutable, contentType: result.contentType, size: result.size, sha256: result.sha256)
                var outcome = "would store"
                if !request.dryRun {
                    let put = try await storage.putIfAbsent(key, staged: StagedObject(path: result.path, metadata: metadata, isTemporary: !inPlace.contains(key)))
                    staged[key] = nil
                    if put == .created { created.append(key) }
                    outcome = put == .created ? "created" : "unchanged"
                    // Prove the object is there, whole and with its headers, before anything names it.
                    try await Self.checkStored(key, expected: metadata, storage: storage)
                } else if let existing = try await storage.head(key) {
                    outcome = existing.size == result.size ? "exists" : "conflict (different size)"
                }
                objects.append(.init(key: key, role: "artifact", outcome: outcome, size: result.size, sha256: result.sha256.hex))
            }
            if !request.dryRun, let beforeManifest {
                // E.g. a full verify through the public URL: the manifest goes live only if it passes.
                try await beforeManifest(manifestData)
            }
            if !request.dryRun {
                let put = try await storage.putIfAbsent(historyKey, data: historyData, metadata: historyMetadata)
                guard put == .created else {
                    throw StorageError.preconditionFailed(key: historyKey, expected: "none", actual: "a record from another publish")
                }
                created.append(historyKey)
            }
            objects.append(.init(key: historyKey, role: "history", outcome: request.dryRun ? "would store" : "created", size: historyMetadata.size, sha256: historyMetadata.sha256.hex))

            if !request.dryRun, let root = (storage as? DirectoryStorage)?.root {
                try await writeHostingFiles(
                    release: release, history: history, request: request, root: root,
                    manifestMetadata: manifestMetadata)
            }
            if !request.dryRun {
                do {
                    try await storage.replace(request.manifestKey, data: manifestData, metadata: manifestMetadata, ifMatch: liveManifest?.etag ?? "")
                } catch {
                    // The store's answer may have been lost after the manifest was written.
                    if let current = try? await storage.get(request.manifestKey, limit: Self.recordLimit), current == manifestData {
                        warn("the store did not confirm the manifest write (\(error)), but the new manifest is live")
                    } else {
                        // It may still land; everything it names is in place, so nothing is removed.
                        throw PublishFailure.manifestNotWritten(underlying: error)
                    }
                }
            }
            objects.append(.init(key: request.manifestKey, role: "manifest", outcome: request.dryRun ? "would replace" : "replaced", size: manifestMetadata.size, sha256: manifestMetadata.sha256.hex))
        } catch let failure as PublishFailure {
            if case .manifestNotWritten(let underlying) = failure {
                throw ModelCastError.usage("the manifest was not replaced (\(underlying)); the previous manifest is still live, and this release's objects stay in place for the next attempt")
            }
            throw failure
        } catch {
            // Before the manifest write: leave the target as it was, removing only what this run created.
            for key in created.reversed() { try? await storage.delete(key) }
            throw error
        }

        return PublishReport(
            target: storage.location, profile: request.profile.rawValue, unchanged: false, dryRun: request.dryRun,
            sequence: release.sequence, previousSequence: live?.sequence, manifestKey: request.manifestKey,
            manifestURL: Self.url(base: request.baseURL, key: request.manifestKey), objects: objects,
            warnings: warnings, manifest: rendered, requests: storage.requestCounts)
    }

    /// The live manifest bytes a record renders to (its own profile).
    static func rendering(of record: Release) -> Data? {
        guard let profile = ManifestProfile(rawValue: record.profile), let value = try? profile.render(record) else { return nil }
        return Data(value.serialized().utf8)
    }

    /// Renders the hosting files for every object the target now holds.
    private func writeHostingFiles(release: Release, history: [Release], request: PublishRequest, root: String, manifestMetadata: ObjectMetadata) async throws {
        var artifacts: [String: ObjectMetadata] = [:]
        for record in history + [release] {
            for model in Array(record.models.values) + (record.prototypes.map { [$0] } ?? []) {
                for file in model.files {
                    guard let digest = SHA256Digest(hex: file.sha256) else { continue }
                    artifacts[file.key] = ObjectMetadata(cacheControl: CachePolicy.immutable, contentType: file.contentType, size: file.size, sha256: digest)
                }
            }
        }
        var objects: [HostedObject] = []
        for key in artifacts.keys.sorted() {
            // Pruned objects are gone; the hosting files list only what is there.
            if try await storage.head(key) != nil {
                objects.append(HostedObject(key: key, role: .artifact, metadata: artifacts[key]!))
            }
        }
        for record in history + [release] {
            let key = Self.historyKey(manifestKey: request.manifestKey, sequence: record.sequence)
            guard let data = try await storage.get(key, limit: Self.recordLimit) else { continue }
            objects.append(HostedObject(key: key, role: .history, metadata: ObjectMetadata(
                cacheControl: CachePolicy.immutable, contentType: "application/json", size: Int64(data.count), sha256: try SHA256Hasher.digest(data))))
        }
        objects.append(HostedObject(key: request.manifestKey, role: .manifest, metadata: manifestMetadata))
        let absoluteRoot = realPath(root) ?? root
        let files = try HostingFiles(
            objects: objects, baseURL: request.baseURL, root: absoluteRoot,
            templates: HostingFiles.templates(overrideDirectory: request.templatesDirectory))
        for file in files.files {
            let path = root + "/" + file.path
            try makeDirectories((path as NSString).deletingLastPathComponent)
            let atomic = try AtomicFile(destination: path)
            try Data(file.content.utf8).withUnsafeBytes { try atomic.descriptor.writeAll($0) }
            if file.path.hasSuffix(".sh") { _ = fchmod(atomic.descriptor.fd, 0o755) }
            try atomic.commit(durable: true)
        }
    }

    /// Base URL + percent-encoded key.
    public static func url(base: String, key: String) -> String {
        (base.hasSuffix("/") ? String(base.dropLast()) : base) + "/" + URLParts.percentEncodedPath(key)
    }

    /// RFC 3339 UTC with seconds: `2026-11-22T03:00:00Z`.
    public static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }
}
