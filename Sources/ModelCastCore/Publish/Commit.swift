import Foundation

/// An artifact packed for a publish, waiting to be stored.
struct StagedArtifact {
    let result: PackResult
    /// The user's own file, uploaded from where it is (never moved or deleted).
    let inPlace: Bool
}

/// How a release goes live; shared by publish, rollback and resign.
public struct CommitSettings: Sendable {
    public var profile: ManifestProfile
    public var manifestKey: String
    public var manifestCacheControl: String
    public var baseURL: String
    public var templatesDirectory: String?
    public var dryRun: Bool
    public var signing: SigningSettings?
    /// Replace a signed live manifest with an unsigned one; otherwise that is refused.
    public var allowUnsigned = false
    /// Continue from a live manifest that no history record explains (otherwise refused).
    public var adoptLive = false
    /// Where the store cannot prove an existing object's SHA-256 itself, accept its size
    /// instead of downloading and hashing it.
    public var trustStored = false
    /// Where `published_at` came from when it is not the current time, for messages
    /// (`SOURCE_DATE_EPOCH=1700000000`).
    public var publishedAtOrigin: String?

    public init(
        profile: ManifestProfile, manifestKey: String, manifestCacheControl: String = CachePolicy.manifestDefault,
        baseURL: String, templatesDirectory: String? = nil, dryRun: Bool = false, signing: SigningSettings? = nil
    ) {
        self.profile = profile
        self.manifestKey = manifestKey
        self.manifestCacheControl = manifestCacheControl
        self.baseURL = baseURL
        self.templatesDirectory = templatesDirectory
        self.dryRun = dryRun
        self.signing = signing
    }

    init(_ request: PublishRequest) {
        self.init(
            profile: request.profile, manifestKey: request.manifestKey, manifestCacheControl: request.manifestCacheControl,
            baseURL: request.baseURL, templatesDirectory: request.templatesDirectory, dryRun: request.dryRun, signing: request.signing)
        allowUnsigned = request.allowUnsigned
        adoptLive = request.adoptLive
        trustStored = request.trustStored
        publishedAtOrigin = request.publishedAtOrigin
    }

    /// The detached signature's key: `manifest.json.minisig`, where minisign looks for it.
    public var signatureKey: String { SignedManifest.signatureKey(for: manifestKey) }
}

extension Publisher {
    /// Makes `release` live: stores the artifacts and checks each one, runs the
    /// `beforeManifest` gate, stores the history record, the hosting files and the
    /// signature, and replaces the manifest last. Before the manifest write, a failure
    /// removes what this run created; after it, nothing is removed.
    ///
    /// `consumed` is told of each artifact the store took over (it no longer needs cleaning up).
    func commit(
        _ release: Release, state: TargetState, settings: CommitSettings, artifacts: [String: StagedArtifact],
        proven: Set<String> = [], warnings: [String], consumed: (String) -> Void = { _ in }
    ) async throws -> PublishReport {
        var warnings = warnings
        func warn(_ text: String) {
            warnings.append(text)
            log("warning: " + text)
        }
        try checkNotExpired(release, settings: settings)
        if state.liveIsUnexplained {
            let shown = state.liveManifestSequence.map { " (sequence \($0))" } ?? ""
            guard settings.adoptLive else {
                throw ModelCastError.usage("the live manifest \(storage.location)/\(settings.manifestKey)\(shown) matches no history record under \(Self.historyPrefix(manifestKey: settings.manifestKey)) (a record was deleted, or another tool wrote it), so what devices have is unknown: restore the history, or pass --adopt-live to publish above it as sequence \(release.sequence)")
            }
            warn("adopting the live manifest \(storage.location)/\(settings.manifestKey)\(shown), which no history record explains; this release is sequence \(release.sequence)")
        }
        // Objects the release names that this run does not store itself (a rollback's, a
        // resign's) were stored earlier: prove their bytes before a manifest names them again.
        let earlier = release.files.filter { artifacts[$0.key] == nil && !proven.contains($0.key) }
        try await proveStored(earlier, localFiles: [:], trustStored: settings.trustStored)
        let unsigned = Data(try settings.profile.render(release).serialized().utf8)
        let hosting = try HostingTarget(storage: storage, manifestKey: settings.manifestKey, baseURL: settings.baseURL, templatesDirectory: settings.templatesDirectory)
        let signed = try settings.signing.flatMap { try $0.sign(unsigned, release: release, manifestKey: settings.manifestKey) }
        let manifestData = signed?.manifest ?? unsigned
        let liveSignature = state.signatureData
        if signed == nil, liveSignature != nil {
            guard settings.allowUnsigned else {
                throw ModelCastError.usage("the live manifest at \(storage.location)/\(settings.manifestKey) is signed (\(settings.signatureKey)): sign this one too with --sign KEYFILE (or $MODELCAST_SIGNING_KEY), or pass --unsigned to drop the signature")
            }
            warn("the live manifest is signed and this one is not: \(settings.signatureKey) is removed, and clients that require a signature will refuse the new manifest")
        }

        let historyKey = Self.historyKey(manifestKey: settings.manifestKey, sequence: release.sequence)
        let historyData = Data(release.jsonValue().serialized().utf8)
        let historyMetadata = try ObjectMetadata(of: historyData, cacheControl: CachePolicy.immutable, contentType: "application/json")
        let manifestMetadata = try ObjectMetadata(of: manifestData, cacheControl: settings.manifestCacheControl, contentType: "application/json")
        let signatureData = signed.map { Data($0.signatureFile.utf8) }
        let signatureMetadata = try signatureData.map {
            try ObjectMetadata(of: $0, cacheControl: settings.manifestCacheControl, contentType: SignedManifest.signatureContentType)
        }

        // Upload order: artifacts, history record, signature, manifest — manifest last.
        var objects: [PublishReport.Object] = []
        var created: [String] = []
        var signatureReplaced = false
        var hostingRewritten = false
        /// Puts the live signature back after a failed manifest write, so it matches the live manifest again.
        func restoreSignature() async {
            guard signatureReplaced else { return }
            if let liveSignature {
                if let metadata = try? ObjectMetadata(of: liveSignature, cacheControl: settings.manifestCacheControl, contentType: SignedManifest.signatureContentType) {
                    try? await storage.replace(settings.signatureKey, data: liveSignature, metadata: metadata, ifMatch: nil)
                }
            } else {
                try? await storage.delete(settings.signatureKey)
            }
        }
        /// Puts the hosting files back as they were for the live release.
        func restoreHostingFiles() async {
            guard hostingRewritten, let hosting else { return }
            let live = (try? liveHostedObjects(state: state, manifestKey: settings.manifestKey)) ?? []
            try? await writeHostingFiles(hosting, records: state.history, recordObjects: state.recordObjects, live: live)
        }
        do {
            for key in artifacts.keys.sorted() {
                let result = artifacts[key]!.result
                let metadata = ObjectMetadata(cacheControl: CachePolicy.immutable, contentType: result.contentType, size: result.size, sha256: result.sha256)
                var outcome = "would store"
                if !settings.dryRun {
                    let put = try await storage.putIfAbsent(key, staged: StagedObject(path: result.path, metadata: metadata, isTemporary: !artifacts[key]!.inPlace, source: result.source))
                    consumed(key)
                    if put == .created { created.append(key) }
                    outcome = put == .created ? "created" : "unchanged"
                    // Prove the object is there, whole and with its headers, before anything names it.
                    try await Self.checkStored(key, expected: metadata, storage: storage)
                } else if let existing = try await storage.head(key) {
                    outcome = existing.size == result.size ? "exists" : "conflict (different size)"
                }
                objects.append(.init(key: key, role: "artifact", outcome: outcome, size: result.size, sha256: result.sha256.hex))
            }
            if !settings.dryRun, let beforeManifest {
                // E.g. a full verify through the public URL: the manifest goes live only if it passes.
                try await beforeManifest(manifestData)
            }
            if !settings.dryRun {
                // `.unchanged` means these very bytes are there: a retried PUT whose first answer
                // was lost, or an identical publish running at the same time. This run cannot
                // tell which, so it never deletes such a record: only what it saw itself create.
                // A different record under the key is a conflict the store reports as an error.
                if try await storage.putIfAbsent(historyKey, data: historyData, metadata: historyMetadata) == .created {
                    created.append(historyKey)
                }
            }
            objects.append(.init(key: historyKey, role: "history", outcome: settings.dryRun ? "would store" : "created", size: historyMetadata.size, sha256: historyMetadata.sha256.hex))

            if !settings.dryRun, let hosting {
                var hosted = [HostedObject(key: settings.manifestKey, role: .manifest, metadata: manifestMetadata)]
                if let signatureMetadata { hosted.insert(HostedObject(key: settings.signatureKey, role: .signature, metadata: signatureMetadata), at: 0) }
                var recordObjects = state.recordObjects
                recordObjects[release.sequence] = historyMetadata
                hostingRewritten = true
                try await writeHostingFiles(hosting, records: state.history + [release], recordObjects: recordObjects, live: hosted)
            }
            if let signatureData, let signatureMetadata {
                // The signature goes up just before the manifest; until the manifest
                // follows, a client sees a mismatch and keeps what it has.
                if !settings.dryRun {
                    signatureReplaced = true
                    try await storage.replace(settings.signatureKey, data: signatureData, metadata: signatureMetadata, ifMatch: nil)
                }
                objects.append(.init(key: settings.signatureKey, role: "signature", outcome: settings.dryRun ? "would replace" : "replaced", size: signatureMetadata.size, sha256: signatureMetadata.sha256.hex))
            }
            if !settings.dryRun {
                do {
                    try await storage.replace(settings.manifestKey, data: manifestData, metadata: manifestMetadata, ifMatch: state.manifestInfo?.etag ?? "")
                } catch {
                    // The store's answer may have been lost after the manifest was written, or the
                    // write may still land. What is restored depends on what is live now: only
                    // a positively unchanged manifest gets its old signature back.
                    let current: Data?
                    do {
                        current = try await storage.get(settings.manifestKey, limit: Self.recordLimit)
                    } catch let readError {
                        throw PublishFailure.manifestUnconfirmed(underlying: error, state: "it could not be read back (\(readError))")
                    }
                    if current == manifestData {
                        warn("the store did not confirm the manifest write (\(error)), but the new manifest is live")
                    } else if current == state.manifestData {
                        // Everything the new manifest names stays in place for the next attempt.
                        throw PublishFailure.manifestNotWritten(underlying: error)
                    } else {
                        throw PublishFailure.manifestUnconfirmed(underlying: error, state: "another manifest is live now (a concurrent publish?)")
                    }
                }
            }
            objects.append(.init(key: settings.manifestKey, role: "manifest", outcome: settings.dryRun ? "would replace" : "replaced", size: manifestMetadata.size, sha256: manifestMetadata.sha256.hex))
        } catch let failure as PublishFailure {
            switch failure {
            case .manifestNotWritten(let underlying):
                // The previous manifest is positively live: give it back its signature and hosting files.
                await restoreSignature()
                await restoreHostingFiles()
                throw ModelCastError.usage("the manifest was not replaced (\(underlying)); the previous manifest is still live, and this release's objects stay in place for the next attempt")
            case .manifestUnconfirmed(let underlying, let liveState):
                // The new manifest may still land: putting the old signature back could leave
                // a signature that contradicts it, so nothing is restored.
                throw ModelCastError.usage("the store did not confirm the manifest write (\(underlying)) and \(liveState); nothing was restored, so the signature matches the new manifest if it lands. Check the target with `modelcast verify` and publish again")
            }
        } catch {
            // Before the manifest write: leave the target as it was, removing only what this run created.
            await restoreSignature()
            for key in created.reversed() { try? await storage.delete(key) }
            await restoreHostingFiles()
            throw error
        }
        // The new manifest is live: from here on nothing it names is removed, whatever fails.
        if !settings.dryRun, signed == nil, liveSignature != nil {
            do { try await storage.delete(settings.signatureKey) } catch {
                warn("could not remove the old signature \(settings.signatureKey) (\(error)); it no longer matches the manifest: delete it")
            }
        }

        return PublishReport(
            target: storage.location, profile: settings.profile.rawValue, unchanged: false, dryRun: settings.dryRun,
            sequence: release.sequence, previousSequence: state.live?.sequence, manifestKey: settings.manifestKey,
            manifestURL: Self.url(base: settings.baseURL, key: settings.manifestKey), objects: objects,
            warnings: warnings, manifest: String(decoding: manifestData, as: UTF8.self), requests: storage.requestCounts)
    }

    /// A manifest that is expired when written (a `published_at` fixed in the past, e.g.
    /// by SOURCE_DATE_EPOCH, plus a short validity period) would be refused by every
    /// device the moment it went live: refuse it here, naming both values.
    func checkNotExpired(_ release: Release, settings: CommitSettings, now: Date = Date()) throws {
        guard let text = release.expiresAt, let expiry = parseTimestamp(text), expiry <= now,
              let published = parseTimestamp(release.publishedAt) else { return }
        let origin = settings.publishedAtOrigin.map { " (\($0))" } ?? ""
        throw ModelCastError.usage(
            "the manifest would be expired before it is published: published_at \(release.publishedAt)\(origin) plus --expires-in \(formatDuration(expiry.timeIntervalSince(published))) is \(text), and it is now \(Self.timestamp(now)); unset SOURCE_DATE_EPOCH or give a longer --expires-in")
    }

    /// Proves each stored object in `files` holds the bytes its record says (the store's own
    /// checksum, or hashing), so a damaged or replaced object never goes live again.
    /// `localFiles`: a local copy of a key's bytes, where the run has one.
    func proveStored(_ files: [ReleaseFile], localFiles: [String: String], trustStored: Bool) async throws {
        for file in files {
            guard let digest = SHA256Digest(hex: file.sha256) else {
                throw ModelCastError.usage("the history names \(storage.location)/\(file.key) with an invalid sha256 '\(file.sha256)'")
            }
            switch try await storage.proveContent(file.key, size: file.size, sha256: digest, localFile: localFiles[file.key], trustStored: trustStored) {
            case .hashed, .storeChecksum: break
            case .trustedSize:
                log("warning: \(storage.location)/\(file.key) has no SHA-256 checksum in the store; --trust-stored accepted its size without reading it")
            }
        }
    }
}
