import Foundation
import ModelCastFormat

extension Committer {
    /// The target's newest key set, walked from `keys/1.json` by the chain rules, or nil when
    /// the target has none.
    func currentKeySet() async throws -> KeySet? {
        let storage = self.storage
        let reader = KeySetChainReader(fetch: { try await storage.get($0, limit: $1) })
        guard let first = try await reader.first() else { return nil }
        return try await reader.walk(from: first.keySet, maxVersions: Int.max).links.last?.keySet ?? first.keySet
    }

    /// Under a key set, the manifest is proved before any write exactly as a client proves
    /// it (`KeySet.verifyManifest`): every `--sign` key must be one of the key set's
    /// manifest keys (a key that is not, or was revoked, is refused by name, not silently
    /// left uncounted), and at least its manifest threshold of them must sign. The key set
    /// must not have expired.
    func checkKeySetSignatures(_ signed: SignedManifest?, keySet: KeySet, release: Release, settings: CommitSettings, now: Date = Date()) throws {
        // Devices refuse every manifest while the newest key set has expired: going live
        // under it would publish what no device installs.
        guard !keySet.isExpired(at: now) else {
            throw ModelCastError.targetState("\(storage.location)'s newest key set, \(keySet.path), expired at \(keySet.expiresAtText): devices refuse every manifest under it; renew it first with modelcast keys rotate (no change needed), then publish")
        }
        let listed = keySet.manifest.keys.map(\.keyID.hex)
        guard let signed else {
            throw ModelCastError.usage("\(storage.location) has key set \(keySet.version): sign the manifest with \(keySet.manifest.threshold) of its manifest keys (\(listed.joined(separator: ", "))) with --sign KEYFILE")
        }
        for signer in settings.signing?.signers ?? [] where !listed.contains(signer.keyIDHex) {
            throw ModelCastError.usage("--sign key \(signer.keyIDHex) is not a manifest key of \(storage.location)'s key set \(keySet.version) (manifest keys: \(listed.joined(separator: ", "))): clients would not count its signature")
        }
        let text = signed.signatureList ?? signed.signatureFile
        let signatures = try MinisignSignatureList(data: Data(text.utf8), source: settings.signatureKey).signatures
        let file = TrustedComment.fileField(channel: release.channel, manifestName: PathText.lastComponent(settings.manifestKey))
        _ = try keySet.verifyManifest(bytes: signed.manifest, signatures: signatures, file: file, sequence: release.sequence,
                                      expiresAt: release.expiresAt, ed25519: KeySetChainReader.ed25519)
    }
}
