import Foundation
import ModelCastFormat

/// `model.signature`: each model version's OpenSSF model signature, fetched as a device
/// would, parsed, and — given `--model-signing-public-key` — verified and compared with
/// the files it covers as served: plain and tree files by the digests the artifact checks
/// prove, a zipped package's files by reading its entries.
extension Verifier {
    func checkModelSignatures(_ facts: ManifestFacts, rules: URLRules, deadline: Date, log: CheckLog) async {
        for reference in facts.modelSignatures {
            await checkModelSignature(reference, rules: rules, deadline: deadline, log: log)
        }
    }

    private func checkModelSignature(_ reference: ModelSignatureReference, rules: URLRules, deadline: Date, log: CheckLog) async {
        guard let object = reference.model.modelSignature else { return }
        let label = reference.label
        func fail(_ detail: String) { log.add(.fail, .modelSignature, object.url, "\(label): \(detail)") }
        let collector = ByteCollector()
        do {
            let response = try await fetchWithRetries(object.url, range: nil, limit: object.size + 1, deadline: deadline, rules: rules,
                                                      reset: collector.reset, consume: collector.append)
            guard response.status == 200 else { return fail("HTTP \(response.status) fetching the bundle (see artifact.status)") }
        } catch {
            return fail("cannot fetch the bundle: \(error)")
        }
        let data = collector.data
        // try?: hashing bytes in memory fails only for want of memory; it reads as a mismatch, reported.
        guard data.count == object.size, (try? SHA256Hasher.digest([UInt8](data)).hex) == object.sha256 else {
            return fail("the bundle served is not the \(object.size) bytes with sha256 \(object.sha256) the manifest names (see artifact.sha256)")
        }
        let bundle: ModelSignatureBundle
        do { bundle = try ModelSignatureBundle(parsing: data, source: object.url) } catch { return fail("\(error)") }
        guard let publicKey = options.modelSigningPublicKey else {
            // The hint is the served bundle's: quoted, never printed raw.
            let hint = bundle.keyHint.map { "the key with hint \(quotedValue($0))" } ?? "a key it does not name"
            log.add(.pass, .modelSignature, object.url,
                    "\(label): present, made with \(hint); not checked: pass --model-signing-public-key KEY.pub to verify it and the files it lists")
            return
        }
        if reference.fallback, let hint = bundle.keyHint, hint != publicKey.hint {
            // A rollback section made before the model-signing key was rotated: present and
            // whole (artifact.sha256), but a device that pins only the new key cannot switch to it.
            log.add(.warn, .modelSignature, object.url,
                    "\(label): made with the key with hint \(quotedValue(hint)), not the one with hint \(publicKey.hint): a device that pins only that key cannot fall back to this release (the key was rotated after it); not checked further")
            return
        }
        do {
            let statement = try bundle.verifiedStatement(publicKey: publicKey, source: object.url)
            let actual = try await servedFiles(of: reference, ignoring: statement.ignorePaths, rules: rules, deadline: deadline)
            let differences = ModelSignatureDifferences(signed: statement.files, actual: actual)
            guard differences.isEmpty else {
                let shown = differences.descriptions.prefix(10).joined(separator: "; ")
                let more = differences.descriptions.count > 10 ? " (and \(differences.descriptions.count - 10) more)" : ""
                return fail("the files served are not the files signed: \(shown)\(more)")
            }
            log.add(.pass, .modelSignature, object.url,
                    "\(label): verified with the key with hint \(publicKey.hint); the \(counted(statement.resources.count, "file")) a device installs match it (subject sha256 \(statement.rootDigest().hex))")
        } catch {
            fail("\(error)")
        }
    }

    /// The files a device installs of the model, named as its signature names them, with
    /// their SHA-256: the manifest's digests for plain and tree files (which the artifact
    /// checks prove against the bytes served), each zipped package's entries read and hashed.
    private func servedFiles(of reference: ModelSignatureReference, ignoring ignored: [ModelFilePath], rules: URLRules,
                             deadline: Date) async throws -> [ModelFilePath: SHA256Hex] {
        let model: CheckedModel
        do { model = try reference.model.checked(name: reference.name, at: "models.\(reference.name)") } catch let error as ManifestValueError {
            throw ModelCastError.invalidManifest(source: reference.label, reason: error.description)
        }
        var (files, zipped) = ModelSignatureSubject(model).knownFiles(of: model)
        for (file, prefix) in zipped {
            let bytes = RangedHTTPBytes(verifier: self, url: file.url.rawValue, size: file.size, deadline: deadline, rules: rules)
            for (name, digest) in try await ZipEntryDigests.digests(bytes, maxEntries: options.maxZipEntries) {
                files[try ModelSignatureSubject.resourceName(ofArchiveEntry: name, prefix: prefix)] = SHA256Hex(bytes: digest.bytes)
            }
        }
        return files.filter { file in !ignored.contains { file.key.isWithin($0) } }
    }
}
