import Foundation
import ModelCastFormat

/// The OpenSSF model signatures a publish writes (`--model-signing-key`): for every unit (a
/// model, or a variant) one Sigstore bundle over exactly the files a device installs
/// (`ModelSignatureSubject`), stored as an immutable object named by its bytes and named
/// in the manifest as `model_signature`. A unit whose version and files the live release
/// has, signed with the same key over the same statement, keeps the live bundle.
struct ModelSignatures {
    let key: P256PrivateKey
    let storage: any Storage
    let baseURL: String

    /// Signs every unit of `units` (label → entry, as packed), staging new bundles.
    /// `descriptions` are the inputs by label (in file order); `live` the live release.
    /// `names` gives each unit's model name and storage name (`NAME/variants/VARIANT`).
    func sign(_ units: inout [String: ReleaseModel], descriptions: [String: [ModelDescription]], names: [String: (model: String, key: String)],
              live: Release?, staging: StagingArea) async throws {
        let liveUnits = live?.unitsByLabel ?? [:]
        for label in units.keys.sorted() {
            let model = names[label]?.model ?? label
            let statement = try Self.statement(of: units[label]!, name: model, label: label, descriptions: descriptions[label] ?? [],
                                               zipped: staging.zippedFileDigests)
            if let previous = liveUnits[label], previous.version == units[label]!.version, previous.files == units[label]!.files,
               let kept = try await reusable(previous.modelSignature, statement: statement) {
                units[label]!.modelSignature = kept
                continue
            }
            let bytes = [UInt8](try ModelSignatureBundle.sign(statement, with: key).json)
            let sha256 = try SHA256Hasher.digest(bytes)
            let objectKey = TargetLayout.modelSignatureKey(model: names[label]?.key ?? label, bundle: sha256)
            try staging.stage(bytes, sha256: sha256, key: objectKey, kind: .file, contentType: ModelSignatureObject.contentType)
            units[label]!.modelSignature = ModelSignatureObject(key: objectKey, url: URLParts.url(base: baseURL, key: objectKey),
                                                                sha256: sha256.hex, size: Int64(bytes.count))
        }
    }

    /// The live unit's signature, when its stored bytes are still what the manifest says
    /// and it verifies with this run's key over this very statement; nil otherwise (a new
    /// one is made).
    private func reusable(_ object: ModelSignatureObject?, statement: ModelSigningStatement) async throws -> ModelSignatureObject? {
        guard let object, let data = try await storage.get(object.key, limit: Int(min(object.size, Int64(ModelSignatureBundle.maximumSize)))),
              data.count == object.size, try SHA256Hasher.digest([UInt8](data)).hex == object.sha256,
              // try?: a bundle that does not parse or verify is not reused: a new one is made.
              let bundle = try? ModelSignatureBundle(parsing: data, source: object.key),
              let signed = try? bundle.verifiedStatement(publicKey: key.publicKey, source: object.key) else { return nil }
        return signed == statement ? object : nil
    }

    /// The statement of what a device installs of `model`: its files named as
    /// `ModelSignatureSubject` says, digests from the manifest for plain and tree files,
    /// and each zipped directory's files as they were hashed while zipped (`zipped`, by the
    /// zip's key), else hashed from the input directory.
    static func statement(of model: ReleaseModel, name: String, label: String, descriptions: [ModelDescription],
                          zipped zippedDigests: [String: [String: SHA256Digest]] = [:]) throws -> ModelSigningStatement {
        let checked: CheckedModel
        do { checked = try model.checked(name: name, at: "models.\(name)") } catch let error as ManifestValueError {
            throw ModelCastError.invalidManifest(source: "the release to publish", reason: error.description)
        }
        let subject = ModelSignatureSubject(checked)
        var (files, zipped) = subject.knownFiles(of: checked)
        for (file, prefix) in zipped {
            guard let position = checked.files.firstIndex(of: file), position < descriptions.count, let tree = descriptions[position].tree else {
                throw ModelCastError.usage("model \(label): \(file.name) is a zipped directory whose input is not known, so it cannot be signed")
            }
            let entries = tree.entries.filter { !$0.isDirectory }
            let known = zippedDigests[file.key.rawValue].map { known in entries.compactMap { known[$0.archiveName] } }
            let digests = try known.flatMap { $0.count == entries.count ? $0 : nil } ?? StreamDigester.digest(ofFilesAt: entries.map(\.diskPath)).map(\.sha256)
            for (entry, digest) in zip(entries, digests) {
                files[try ModelSignatureSubject.resourceName(ofArchiveEntry: entry.archiveName, prefix: prefix)] = SHA256Hex(bytes: digest.bytes)
            }
        }
        // What model_signing leaves out of the model on disk is left out of the statement.
        let ignored = subject.ignorePaths
        files = files.filter { file in !ignored.contains { file.key.isWithin($0) } }
        return ModelSigningStatement(modelName: subject.subjectName(model: checked.name), files: files, ignorePaths: ignored)
    }

    /// A target whose live models carry model signatures keeps its model-signing key:
    /// policy engines and devices pin it. Refuses publishing without one (unless
    /// `--unsigned-models`) and with another key (unless `--rotate-model-signing-key`),
    /// naming both keys' hints. Reads one live bundle to learn the live key.
    static func checkKeyChange(_ settings: ModelSigningSettings?, unsigned: Bool, live: Release?, storage: any Storage) async throws {
        // Every bundle of a release is made (or kept) with the key the run signs with.
        guard let object = live?.objects(in: [.release]).first(where: { $0.kind == .modelSignature }) else { return }
        let data = try await storage.get(object.key, limit: ModelSignatureBundle.maximumSize)
        // try?: an unreadable live bundle has no hint; the message names its key instead.
        let liveHint = data.flatMap { try? ModelSignatureBundle(parsing: $0, source: object.key) }?.keyHint
        // The hint is read from the store: quoted, never printed raw.
        let shown = liveHint.map { "with the key with hint \(quotedValue($0))" } ?? "(\(object.key))"
        guard let settings else {
            guard unsigned else {
                throw ModelCastError.liveReleaseConflict("the live release's models carry OpenSSF model signatures \(shown): sign this release's models too with --model-signing-key KEY.pem (or $\(ModelSigningSettings.environmentVariable)), or pass --unsigned-models to publish them without")
            }
            return
        }
        guard let liveHint, liveHint != settings.key.publicKey.hint, !settings.rotatesKey else { return }
        throw ModelCastError.liveReleaseConflict("the live release's model signatures were made with the key with hint \(quotedValue(liveHint)), and this run signs with the key with hint \(settings.key.publicKey.hint): whoever pinned the old public key (a device's ModelCastClient, a policy engine) refuses the new signatures. To rotate, first ship the new public key to them, then pass --rotate-model-signing-key (docs/signing.md: Rotating the signing key); to keep the key, sign with the one whose hint is \(quotedValue(liveHint))")
    }
}

/// The model-signing key of a publish (`--model-signing-key`, or the PEM text in
/// `$MODELCAST_MODEL_SIGNING_KEY`), and whether changing the live key is intended.
package struct ModelSigningSettings: Sendable {
    /// The environment variable holding the key's PEM text (never printed).
    package static let environmentVariable = "MODELCAST_MODEL_SIGNING_KEY"
    package let key: P256PrivateKey
    /// `--rotate-model-signing-key`: sign with a key other than the live release's.
    package var rotatesKey = false

    package init(key: P256PrivateKey, rotatesKey: Bool = false) {
        self.key = key
        self.rotatesKey = rotatesKey
    }
}
