import Foundation
import ModelCastFormat

/// A manifest proven under a key set: at least its manifest threshold of distinct manifest
/// keys signed it. The signatures are the inline member (over the manifest without it),
/// `MANIFEST.minisig` (the first key's, which `minisign -V` checks) and `MANIFEST.sigs`
/// (every signer's), both over the bytes as served. A signature by a key the set no longer
/// lists (a revoked one) does not count.
///
/// A publish writes `.minisig` and `.sigs` just before the manifest; stopped between them,
/// it leaves the next release's signatures beside the live manifest. As with a pinned key
/// (`keptSignatureProof`), the signatures the live manifest's release kept beside its
/// history record (`manifests/N.json.minisig`, `manifests/N.json.sigs`) are then read, and
/// must meet the same threshold over the same bytes with comments that bind this very
/// manifest; nothing else is weaker.
extension ManifestFetcher {
    /// The release and the trusted comment with the earliest expiry among those counted.
    func provenByThreshold(_ data: Data, keySet: KeySet) async throws -> (Release, TrustedComment?) {
        let manifestURL = configuration.manifestURL
        let url = manifestURL.absoluteString
        let inline: (bytes: Data, signature: MinisignSignature)?
        do {
            inline = try InlineSignature.split(data).map { bytes, member in
                (bytes, try MinisignSignature(fileContents: try InlineSignature.signatureFile(fromMember: member), source: url))
            }
        } catch {
            throw ClientError.badSignature(url: url, reason: String(describing: error))
        }
        let live = try await signatures(beside: manifestURL)
        guard inline != nil || !live.signatures.isEmpty else { throw ClientError.unsigned(url: url) }
        let release = try decodeRelease(inline?.bytes ?? data)
        let liveFailure: String
        do {
            return (release, try threshold(keySet, data, inline: inline, signatures: live.signatures, release: release))
        } catch {
            liveFailure = String(describing: error)
        }
        func refused(_ why: String? = nil) -> ClientError {
            .manifestThresholdNotMet(url: url, keySetVersion: keySet.version, reason: liveFailure + (why.map { "; " + $0 } ?? ""))
        }
        // Read before any signature proves it, only to learn which kept signatures to fetch
        // (see `KeptSignatureLookup`): the first live signature names another sequence.
        guard let first = live.signatures.first,
              let sequence = KeptSignatureLookup.sequence(manifestSequence: release.sequence, liveSignatureFile: first.fileContents) else { throw refused() }
        guard let keptURL = Self.keptSignatureURL(manifestURL: manifestURL, sequence: sequence) else {
            throw refused("no kept signature was looked for: the manifest URL's path does not end in a .json file, so it is not laid out as modelcast writes a target")
        }
        let kept = "the signatures kept for sequence \(sequence), \(keptURL.absoluteString) and .sigs,"
        let found: (signatures: [MinisignSignature], statuses: [Int])
        do { found = try await signatures(minisig: keptURL, list: keptURL.deletingPathExtension().appendingPathExtension("sigs")) } catch {
            throw refused("\(kept) could not be read: \(error)")
        }
        guard !found.signatures.isEmpty else { throw refused("\(kept) are not there (HTTP \(found.statuses.map(String.init).joined(separator: ", ")))") }
        do {
            return (release, try threshold(keySet, data, inline: inline, signatures: found.signatures, release: release))
        } catch {
            throw refused("\(kept) do not prove it either: \(error)")
        }
    }

    /// The counted comment with the earliest expiry, when `signatures` (over `data`) and
    /// `inline` meet `keySet`'s manifest threshold for `release`; else `KeySetError`.
    private func threshold(_ keySet: KeySet, _ data: Data, inline: (bytes: Data, signature: MinisignSignature)?,
                           signatures: [MinisignSignature], release: Release) throws -> TrustedComment? {
        let file = TrustedComment.fileField(channel: configuration.channel, manifestName: configuration.manifestURL.lastPathComponent)
        let proof = try keySet.verifyManifest(bytes: data, signatures: signatures, inline: inline, file: file, sequence: release.sequence,
                                              expiresAt: release.expiresAt, ed25519: Self.ed25519)
        let earliest = proof.earliestExpiry
        return proof.comments.first { $0.expiresAt == earliest } ?? proof.comments.first
    }

    /// `MANIFEST.minisig` and `MANIFEST.sigs` beside the manifest at `manifestURL`.
    private func signatures(beside manifestURL: URL) async throws -> (signatures: [MinisignSignature], statuses: [Int]) {
        try await signatures(minisig: manifestURL.appendingPathExtension("minisig"), list: manifestURL.appendingPathExtension("sigs"))
    }

    /// The signature at `minisig` and those of the list at `list`, each absent when the
    /// server has none (`OptionalObject`), with the two answers' statuses.
    private func signatures(minisig: URL, list: URL) async throws -> (signatures: [MinisignSignature], statuses: [Int]) {
        let url = configuration.manifestURL.absoluteString
        let single = try await OptionalObject.fetch(minisig, http: http, object: .signature, limit: Self.maxSignatureBytes)
        let several = try await OptionalObject.fetch(list, http: http, object: .signatureList, limit: MinisignSignatureList.maxBytes)
        var found: [MinisignSignature] = []
        do {
            if let body = single.body { found.append(try MinisignSignature(fileContents: String(decoding: body, as: UTF8.self), source: minisig.absoluteString)) }
            if let body = several.body { found += try MinisignSignatureList(data: body, source: list.absoluteString).signatures }
        } catch {
            throw ClientError.badSignature(url: url, reason: String(describing: error))
        }
        return (found, [single.status, several.status])
    }
}
