import Foundation

/// An artifact packed for a publish, waiting to be stored.
struct StagedArtifact {
    let result: PackResult
    /// The user's own file, uploaded from where it is (never moved or deleted).
    let inPlace: Bool
}

/// What every request that ends in a commit (publish, rollback, resign) says about how
/// its release goes live. The flow is one way: flags and the config file make the request
/// (`PublishCommandLine.makeRequest`, or the command's flags), the request and what the
/// target holds make the `CommitSettings`, and those with the release make the `CommitPlan`.
protocol GoLiveRequest {
    var manifestKey: String { get }
    var goLive: GoLive { get }
}

extension PublishRequest: GoLiveRequest {}
extension RollbackRequest: GoLiveRequest {}
extension ResignRequest: GoLiveRequest {}

/// How a release goes live; shared by publish, rollback and resign.
package struct CommitSettings: Sendable {
    package var profile: ManifestProfile
    package var manifestKey: String
    package var manifestCacheControl: String
    package var baseURL: String
    package var templatesDirectory: String?
    package var dryRun: Bool
    package var signing: SigningSettings?
    /// Replace a signed live manifest with an unsigned one; otherwise that is refused.
    package var allowUnsigned = false
    /// Continue from a live manifest that no history record explains (otherwise refused).
    package var adoptLive = false
    /// Where the store cannot prove an existing object's SHA-256 itself, accept its size
    /// instead of downloading and hashing it.
    package var trustStored = false
    /// Where `published_at` came from when it is not the current time, for messages
    /// (`SOURCE_DATE_EPOCH=1700000000`).
    package var publishedAtOrigin: String?
    /// The hosts the directory is deployed to, whose documented limits are checked for
    /// what this run adds (`--hosted-on`); none: no host's limits are checked.
    package var hostedOn: Set<HostLimits.Host> = []

    package init(
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

    /// The settings for `request` once what it leaves open is known from the target (the
    /// profile, base URL and Cache-Control a rollback or resign keeps from the live release).
    init(_ request: some GoLiveRequest, profile: ManifestProfile, baseURL: String, manifestCacheControl: String, signing: SigningSettings?) {
        self.init(
            profile: profile, manifestKey: request.manifestKey, manifestCacheControl: manifestCacheControl,
            baseURL: baseURL, templatesDirectory: request.goLive.templatesDirectory, dryRun: request.goLive.dryRun, signing: signing)
        allowUnsigned = request.goLive.allowUnsigned
        adoptLive = request.goLive.adoptLive
        trustStored = request.goLive.trustStored
        publishedAtOrigin = request.goLive.publishedAtOrigin
    }

    /// The detached signature's key: `manifest.json.minisig`, where minisign looks for it.
    package var signatureKey: String { SignedManifest.signatureKey(for: manifestKey) }
    /// Every signer's signature: `manifest.json.sigs`, beside the `.minisig`.
    package var signatureListKey: String { manifestKey + ".sigs" }
}

/// Everything a commit writes, rendered, signed and checked before any write: what
/// `--dry-run` reports, and what `apply` executes in order (artifacts, history record,
/// hosting files, signature, manifest last).
struct CommitPlan {
    /// One artifact to store: the staged file and the metadata it is stored with.
    struct Artifact {
        let key: String
        let staged: StagedArtifact
        let metadata: ObjectMetadata
    }

    let release: Release
    let settings: CommitSettings
    /// In key order.
    let artifacts: [Artifact]
    let historyKey: String
    let historyData: Data
    let historyMetadata: ObjectMetadata
    /// The new detached signature, or nil for an unsigned manifest.
    let signature: (data: Data, metadata: ObjectMetadata)?
    /// `manifest.json.sigs`: every signer's signature (several `--sign` keys), or nil.
    let signatureList: (data: Data, metadata: ObjectMetadata)?
    let manifestData: Data
    let manifestMetadata: ObjectMetadata
    /// An unsigned manifest replaces a signed one: the old signature goes once the manifest is live.
    let dropsSignature: Bool
    /// Where the hosting files go (directory targets), with their templates loaded.
    let hosting: HostingTarget?
    /// The command's warnings: those found so far, and those applying the plan adds.
    let warnings: Warnings
}

/// Makes a release live for every command that writes a manifest (publish, rollback,
/// resign, promote, rollout changes): plans the commit with no write, then applies it
/// (`CommitApplier`), or reports the plan for a dry run.
struct Committer: TargetWriting {
    let writer: TargetWriter

    /// Makes `release` live: plans the commit (everything rendered, signed, checked and
    /// the objects it names proven, with no write), then applies the plan — or, for a dry
    /// run, reports it. `consumed` is told of each artifact the store took over (it no
    /// longer needs cleaning up).
    func commit(
        _ release: Release, state: TargetState, settings: CommitSettings, artifacts: [String: StagedArtifact],
        proven: Set<String> = [], warnings: Warnings, consumed: (String) -> Void = { _ in }
    ) async throws -> PublishReport {
        let plan = try await planCommit(release, state: state, settings: settings, artifacts: artifacts, proven: proven, warnings: warnings)
        if settings.dryRun { return try await dryRunReport(plan, state: state) }
        return try await CommitApplier(writer: writer).apply(plan, state: state, consumed: consumed)
    }

    /// Everything checked and rendered before anything is written. Reads the target
    /// (proving the earlier objects the release names) but never writes it.
    func planCommit(
        _ release: Release, state: TargetState, settings: CommitSettings, artifacts: [String: StagedArtifact],
        proven: Set<String>, warnings: Warnings
    ) async throws -> CommitPlan {
        let warn = warnings.add
        // The one validation devices and verify apply to what is served: a release with any
        // value they would refuse is never written.
        do { try release.validate() } catch let error as ManifestValueError {
            throw ModelCastError.invalidManifest(source: "the release to publish", reason: error.description)
        }
        try checkNotExpired(release, settings: settings)
        if let problem = state.index.problem, !state.history.isEmpty {
            warn("\(problem): every history record was read instead, and this run writes a new index")
        }
        if state.liveIsUnexplained {
            let shown = state.liveManifestSequence.map { " (sequence \($0))" } ?? ""
            guard settings.adoptLive else {
                throw ModelCastError.targetState("the live manifest \(storage.location)/\(settings.manifestKey)\(shown) matches no history record under \(TargetLayout.historyPrefix(manifestKey: settings.manifestKey)) (a record was deleted, or another tool wrote it), so what devices have is unknown: restore the history, or pass --adopt-live to publish above it as sequence \(release.sequence)")
            }
            warn("adopting the live manifest \(storage.location)/\(settings.manifestKey)\(shown), which no history record explains; this release is sequence \(release.sequence)")
        }
        // Every object the release names that this run does not store itself (a rollback's,
        // a resign's, the fallback's, segment indexes and model signatures alike) was stored
        // earlier: prove its bytes before a manifest names it again.
        try await writer.proofs.proveObjects(release.objects.filter { artifacts[$0.key] == nil && !proven.contains($0.key) }, trustStored: settings.trustStored)

        let unsigned = Data(try settings.profile.render(release).serialized().utf8)
        let hosting = try HostingTarget(storage: storage, manifestKey: settings.manifestKey, baseURL: settings.baseURL, templatesDirectory: settings.templatesDirectory)
        let keySet = try await currentKeySet()
        // Under a key set, which keys may sign is the key set's to say (`keys rotate`), not the live manifest's.
        if keySet == nil { try checkSigningKey(settings: settings, state: state) }
        var signed = try settings.signing.flatMap { try $0.sign(unsigned, release: release, manifestKey: settings.manifestKey) }
        // A live signature list would no longer match the new manifest: it is replaced, if only by one signature.
        if let one = signed, one.signatureList == nil, try await storage.head(settings.signatureListKey) != nil {
            signed?.signatureList = one.signatureFile
        }
        if let keySet { try checkKeySetSignatures(signed, keySet: keySet, release: release, settings: settings) }
        let dropsSignature = signed == nil && state.signatureData != nil
        if dropsSignature {
            guard settings.allowUnsigned else {
                throw ModelCastError.liveReleaseConflict("the live manifest at \(storage.location)/\(settings.manifestKey) is signed (\(settings.signatureKey)): sign this one too with --sign KEYFILE (or $MODELCAST_SIGNING_KEY), or pass --unsigned to drop the signature")
            }
            warn("the live manifest is signed and this one is not: \(settings.signatureKey) is removed, and clients that require a signature will refuse the new manifest")
        }
        let manifestData = signed?.manifest ?? unsigned
        let historyData = Data(release.jsonValue().serialized().utf8)
        try ServedLimits.check(manifest: manifestData, record: historyData, manifestKey: settings.manifestKey)
        let signatureData = signed.map { Data($0.signatureFile.utf8) }
        let signatureListData = signed?.signatureList.map { Data($0.utf8) }
        return CommitPlan(
            release: release, settings: settings,
            artifacts: artifacts.keys.sorted().map { key in
                let result = artifacts[key]!.result
                return .init(key: key, staged: artifacts[key]!, metadata: ObjectMetadata(
                    cacheControl: CachePolicy.immutable, contentType: result.contentType, size: result.size, sha256: result.sha256))
            },
            historyKey: TargetLayout.historyKey(manifestKey: settings.manifestKey, sequence: release.sequence), historyData: historyData,
            historyMetadata: try TargetLayout.recordMetadata(of: historyData),
            signature: try signatureData.map {
                ($0, try ObjectMetadata(of: $0, cacheControl: settings.manifestCacheControl, contentType: SignedManifest.signatureContentType))
            },
            signatureList: try signatureListData.map {
                ($0, try ObjectMetadata(of: $0, cacheControl: settings.manifestCacheControl, contentType: SignedManifest.signatureContentType))
            },
            manifestData: manifestData,
            manifestMetadata: try ObjectMetadata(of: manifestData, cacheControl: settings.manifestCacheControl, contentType: "application/json"),
            dropsSignature: dropsSignature, hosting: hosting, warnings: warnings)
    }

    /// A signed target keeps its key: devices pin it, and a manifest signed with another
    /// key is refused by every one of them, this release and every later one. Another key
    /// needs `--rotate-key` (after an app that pins both has shipped).
    func checkSigningKey(settings: CommitSettings, state: TargetState) throws {
        guard let signer = settings.signing?.signer, settings.signing?.rotatesKey != true,
              let liveKey = state.liveSigningKeyID, liveKey != signer.keyIDHex else { return }
        throw ModelCastError.liveReleaseConflict("the live manifest at \(storage.location)/\(settings.manifestKey) is signed with key \(liveKey), and this run signs with key \(signer.keyIDHex): every device that pinned \(liveKey) would refuse this release and every later one. To rotate keys, first ship an app version that pins both, then pass --rotate-key (docs/signing.md: Rotating the signing key); to keep the key, sign with the one whose id is \(liveKey)")
    }

    /// The report of a dry run: the plan, with what the target already holds of each artifact.
    func dryRunReport(_ plan: CommitPlan, state: TargetState) async throws -> PublishReport {
        var objects: [PublishReport.Object] = []
        for artifact in plan.artifacts {
            var outcome = "would store"
            if let existing = try await storage.head(artifact.key) {
                outcome = existing.size == artifact.metadata.size ? "exists" : "conflict (different size)"
            }
            objects.append(.init(key: artifact.key, role: "artifact", outcome: outcome, size: artifact.metadata.size, sha256: artifact.metadata.sha256.hex))
        }
        objects.append(.init(key: plan.historyKey, role: "history", outcome: "would store", size: plan.historyMetadata.size, sha256: plan.historyMetadata.sha256.hex))
        if let signature = plan.signature {
            objects.append(.init(key: plan.settings.signatureKey, role: "signature", outcome: "would replace", size: signature.metadata.size, sha256: signature.metadata.sha256.hex))
        }
        if let list = plan.signatureList {
            objects.append(.init(key: plan.settings.signatureListKey, role: "signature", outcome: "would replace", size: list.metadata.size, sha256: list.metadata.sha256.hex))
        }
        objects.append(.init(key: plan.settings.manifestKey, role: "manifest", outcome: "would replace", size: plan.manifestMetadata.size, sha256: plan.manifestMetadata.sha256.hex))
        return PublishReport(plan, state: state, objects: objects, warnings: plan.warnings.all, storage: storage)
    }

    /// A manifest that is expired when written (a `published_at` fixed in the past, e.g.
    /// by SOURCE_DATE_EPOCH, plus a short validity period) would be refused by every
    /// device the moment it went live: refuse it here, naming both values.
    func checkNotExpired(_ release: Release, settings: CommitSettings, now: Date = Date()) throws {
        guard let text = release.expiresAt, let expiry = parseTimestamp(text), expiry <= now,
              let published = parseTimestamp(release.publishedAt) else { return }
        throw ModelCastError.expiredManifest(
            publishedAt: release.publishedAt, origin: settings.publishedAtOrigin,
            validity: formatDuration(expiry.timeIntervalSince(published)), expiresAt: text, now: formatTimestamp(now))
    }
}
