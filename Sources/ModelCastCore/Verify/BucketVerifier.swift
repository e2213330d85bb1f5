import Foundation

/// Checks an object-store target through its API (S3's HEAD) before release: the
/// manifest's headers, that it is the rendering of the latest history record, and that
/// every object that record names — current and rollback — exists with the right size,
/// SHA-256, Cache-Control and Content-Type. Nothing is downloaded but the manifest and
/// the record. Headers are judged as URL verify judges them; a missing one fails. (A
/// plain directory keeps no headers: `verify DIR` reads them from `_modelcast/objects.json`.)
public struct BucketVerifier: Sendable {
    public let storage: any Storage
    public let manifestKey: String
    public let strict: Bool
    /// Trusted signing keys (the manifest must be signed by one of them).
    public var publicKeys: [MinisignPublicKey] = []
    /// Fail an unsigned manifest even without keys to check it against.
    public var requireSignature = false
    /// Accept a legacy (`Ed`, not prehashed) minisign signature.
    public var allowLegacySignature = false
    public var now = Date()
    public var expiryWarning: TimeInterval = 7 * 24 * 3600
    /// Refuse a zip artifact with more entries than this (`--max-zip-entries`).
    public var maxZipEntries = ZipInspector.defaultMaxEntries

    public init(storage: any Storage, manifestKey: String = "manifest.json", strict: Bool = false) {
        self.storage = storage
        self.manifestKey = manifestKey
        self.strict = strict
    }

    public func verify() async -> VerifyReport {
        let log = CheckLog()
        let source = "\(storage.location)/\(manifestKey)"
        var profile: String?
        var sequence: Int64?
        do {
            // One read of the target: history, manifest and signature.
            let state = try await TargetState.load(from: storage, manifestKey: manifestKey)
            guard let info = state.manifestInfo, let data = state.manifestData else {
                log.add(.fail, .manifestExists, source, "no manifest at \(manifestKey)")
                return VerifyReport(source: source, profile: nil, sequence: nil, checks: log.checks, strict: strict)
            }
            log.add(.pass, .manifestExists, source, "\(info.size) bytes")
            // S3's HEAD returns the Cache-Control and Content-Type an object was stored with:
            // none means none will be served, as URL verify would find.
            if let cacheControl = info.cacheControl {
                do {
                    try CachePolicy.validateManifest(cacheControl)
                    log.add(.pass, .manifestCacheControl, source, cacheControl)
                } catch {
                    log.add(.fail, .manifestCacheControl, source, String(describing: error))
                }
            } else {
                log.add(.fail, .manifestCacheControl, source, "missing: stored without Cache-Control, so CDNs and devices may cache the manifest heuristically and miss releases and rollbacks")
            }
            if let contentType = info.contentType, isJSONMediaType(contentType) {
                log.add(.pass, .manifestContentType, source, contentType)
            } else {
                log.add(.fail, .manifestContentType, source, "'\(info.contentType ?? "")', expected application/json")
            }
            var signatures = SignatureCheck(publicKeys: publicKeys, requireSignature: requireSignature, expiryWarning: expiryWarning, now: now)
            signatures.allowLegacy = allowLegacySignature
            var comment: TrustedComment?
            if signatures.isEnabled {
                let failuresBefore = log.failures
                comment = signatures.run(manifest: data, detached: state.signatureData.map { .found($0) } ?? .absent, manifestName: signedFileName(ofManifestKey: manifestKey), source: source, log: log)
                if log.failures != failuresBefore, let repair = SignaturePair.repair(for: state, manifestKey: manifestKey) {
                    log.add(.fail, .manifestTrust, source, SignaturePair.describe(repair, location: storage.location, manifestKey: manifestKey))
                }
            }
            let facts = try ManifestFacts.read(data, source: source)
            profile = facts.profile.rawValue
            log.add(.pass, .manifestParse, source, "profile \(facts.profile.rawValue)")
            if let comment { signatures.crossCheck(comment, facts: facts, source: source, log: log) }
            if let expiresAt = facts.expiresAt { checkExpiry(expiresAt, source: source, log: log, now: now, warning: expiryWarning) }
            Verifier.checkRollout(facts, subject: source, log: log)

            guard let latest = state.history.last else {
                log.add(.warn, .manifestHistory, source, "no history record under \(TargetLayout.historyPrefix(manifestKey: manifestKey)): objects cannot be listed")
                return VerifyReport(source: source, profile: profile, sequence: nil, checks: log.checks, strict: strict)
            }
            let record = state.liveRecord ?? latest
            sequence = record.sequence
            let freshness = LiveFreshness(state)
            if let live = state.liveRecord {
                // A newer record may be a publish that died before its manifest write, or one
                // that went live and was then replaced by this older manifest (checked below).
                let newer = latest.sequence == live.sequence ? "" : freshness.isStale ? " (newer records exist)" : " (record \(latest.sequence) never went live)"
                log.add(.pass, .manifestHistory, source, "the live manifest is history record \(live.sequence)\(newer)")
            } else {
                log.add(.warn, .manifestHistory, source, "the live manifest is not the rendering of any history record (edited by hand?); checking the objects of the latest, \(latest.sequence)")
            }
            freshness.check(source: source, log: log)
            // Each file with its model's label and, for the checks verify URL makes too, the
            // label verify URL gives it (`m 1.0.0/model.zip`), so both word a failure alike.
            var files: [(String, String, ReleaseFile)] = []
            func place(_ model: ReleaseModel, _ file: ReleaseFile) -> String { "\(model.tree.map { $0 + "/" } ?? "")\(file.placement)" }
            for (name, model) in record.models.sorted(by: { $0.key < $1.key }) {
                files += model.files.map { ("\(name) \(model.version)", "\(name) \(model.version)/\(place(model, $0))", $0) }
            }
            if let prototypes = record.prototypes { files += prototypes.files.map { ("prototypes \(prototypes.version)", "prototypes \(prototypes.version)/\(place(prototypes, $0))", $0) } }
            for (name, model) in (record.rollback?.models ?? [:]).sorted(by: { $0.key < $1.key }) {
                files += model.files.map { ("rollback \(name) \(model.version)", "rollback \(name) \(model.version)/\(place(model, $0))", $0) }
            }
            var seen = Set<String>()
            for (label, fileLabel, file) in files where seen.insert(file.key).inserted {
                let subject = "\(storage.location)/\(file.key)"
                guard let object = try await storage.head(file.key) else {
                    log.add(.fail, .objectExists, subject, "\(label): missing")
                    continue
                }
                log.add(object.size == file.size ? .pass : .fail, .objectSize, subject, "\(label): \(object.size) bytes\(object.size == file.size ? "" : ", expected \(file.size)")")
                // The bytes are proven (the store's own checksum, or a download), never taken
                // from the object's metadata, which anyone who can write the key can set.
                if let expected = SHA256Digest(hex: file.sha256) {
                    do {
                        let proof = try await storage.proveContent(file.key, size: file.size, sha256: expected, localFile: nil, trustStored: false)
                        log.add(.pass, .objectSha256, subject, "\(label): \(file.sha256) (\(proof == .storeChecksum ? "the store's checksum" : "downloaded and hashed"))")
                    } catch let error as StorageError {
                        log.add(.fail, .objectSha256, subject, "\(label): \(error)")
                    }
                } else {
                    log.add(.fail, .objectSha256, subject, "\(label): the record's sha256 '\(file.sha256)' is not a SHA-256")
                }
                // Judged exactly as URL verify judges the Cache-Control it is served with.
                let (cacheStatus, cacheDetail) = Verifier.judgeArtifactCacheControl(object.cacheControl)
                log.add(cacheStatus, .objectCacheControl, subject, "\(label): \(cacheDetail)")
                let contentType = object.contentType ?? ""
                let typeOK = mediaType(contentType) == mediaType(file.contentType)
                log.add(typeOK ? .pass : .fail, .objectContentType, subject, "\(label): '\(contentType)'\(typeOK ? "" : ", expected '\(file.contentType)'")")
                // A zip is unpacked on the device: the same check as verify URL and verify DIR,
                // its records read with ranged GETs.
                if ZipSafetyCheck.applies(contentType: file.contentType, name: file.key) {
                    await ZipSafetyCheck.run(StoredObjectBytes(storage: storage, key: file.key, size: object.size), label: fileLabel, subject: subject,
                                             maxEntries: maxZipEntries, log: log)
                }
            }
        } catch {
            // A store that cannot be reached (or refuses the credentials) is a network failure, not a failed check.
            log.add(.fail, .storage, source, String(describing: error), hostNotReached: ExitStatus(for: error) == .io)
        }
        return VerifyReport(source: source, profile: profile, sequence: sequence, checks: log.checks, strict: strict)
    }
}
