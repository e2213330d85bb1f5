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
        warnings: [String], consumed: (String) -> Void = { _ in }
    ) async throws -> PublishReport {
        var warnings = warnings
        func warn(_ text: String) {
            warnings.append(text)
            log("warning: " + text)
        }
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
                // was lost (a record holds its sequence and time, so no other publish writes them).
                // A different record under the key is a conflict the store reports as an error.
                _ = try await storage.putIfAbsent(historyKey, data: historyData, metadata: historyMetadata)
                created.append(historyKey)
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
                    // The store's answer may have been lost after the manifest was written.
                    if let current = try? await storage.get(settings.manifestKey, limit: Self.recordLimit), current == manifestData {
                        warn("the store did not confirm the manifest write (\(error)), but the new manifest is live")
                    } else {
                        // It may still land; everything it names is in place, so nothing is removed.
                        throw PublishFailure.manifestNotWritten(underlying: error)
                    }
                }
            }
            objects.append(.init(key: settings.manifestKey, role: "manifest", outcome: settings.dryRun ? "would replace" : "replaced", size: manifestMetadata.size, sha256: manifestMetadata.sha256.hex))
        } catch let failure as PublishFailure {
            await restoreSignature()
            await restoreHostingFiles()
            if case .manifestNotWritten(let underlying) = failure {
                throw ModelCastError.usage("the manifest was not replaced (\(underlying)); the previous manifest is still live, and this release's objects stay in place for the next attempt")
            }
            throw failure
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
}
