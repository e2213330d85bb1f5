import Foundation
import ModelCastFormat

/// What `verify --trusted-keys` proved: the chain walked from the pinned key set, and the
/// manifest's signers under the newest one.
package struct KeySetVerification: Sendable {
    /// The pinned key set (trusted as given), then each newer version verified from it.
    package let chain: [KeySetLink]
    /// True when the walk stopped at `KeySetChain.maxVersionsPerCheck` with more to read.
    package let truncated: Bool
    /// The manifest keys whose signatures counted, in signature order.
    package let manifestSigners: [MinisignKeyID]
    /// The newest key set: its manifest keys are the ones a device trusts now.
    package var current: KeySet { chain.last!.keySet }

    /// Walks the chain from `pinned` (the bytes of the key set an app ships) through
    /// `fetch` (target-relative keys: `keys/N.json`, `manifest.json.sigs`), as a device
    /// does: at most `KeySetChain.maxVersionsPerCheck` versions, each 64 KiB at most; the
    /// newest must not have expired at `now`; then the manifest (`manifest`, with its
    /// `.minisig` and `.sigs` under `manifestKey`) must carry the newest set's manifest
    /// threshold of signatures. Throws `KeySetError` naming what failed.
    package static func run(pinned: Data, pinnedSource: String = "--trusted-keys", manifest: Data, manifestKey: String, channel: String, now: Date,
                            fetch: @escaping KeySetChainReader.Fetch) async throws -> KeySetVerification {
        let trusted: KeySet
        do { trusted = try KeySet(parsing: pinned) } catch let error as ManifestValueError {
            throw KeySetError.invalidDocument(path: pinnedSource, error: error)
        }
        let reader = KeySetChainReader(fetch: fetch)
        let walk = try await reader.walk(from: trusted, maxVersions: KeySetChain.maxVersionsPerCheck)
        let chain = [KeySetLink(keySet: trusted, bytes: pinned, signers: [])] + walk.links
        let current = chain.last!.keySet
        try current.checkFresh(at: now)
        let proof = try await proveManifest(manifest, manifestKey: manifestKey, channel: channel, under: current, fetch: fetch)
        return KeySetVerification(chain: chain, truncated: walk.truncated, manifestSigners: proof.signers.map(\.keyID))
    }

    /// Proves `manifest` (the bytes at `manifestKey`, channel `channel`'s) under `keySet`:
    /// its signatures (`MANIFEST.minisig`, then the entries of `MANIFEST.sigs`, read through
    /// `fetch`) must carry the set's manifest threshold. Throws
    /// `KeySetError.thresholdNotMet` naming who signed and why the others did not count.
    package static func proveManifest(_ manifest: Data, manifestKey: String, channel: String, under keySet: KeySet,
                                      fetch: KeySetChainReader.Fetch) async throws -> ManifestThresholdProof {
        var signatures: [MinisignSignature] = []
        let minisigKey = TargetKeys.signatureKey(forManifestKey: manifestKey)
        if let single = try await fetch(minisigKey, MinisignSignatureList.maxBytes) {
            signatures += try MinisignSignatureList(data: single, source: minisigKey).signatures
        }
        if let list = try await fetch(manifestKey + ".sigs", MinisignSignatureList.maxBytes) {
            signatures += try MinisignSignatureList(data: list, source: manifestKey + ".sigs").signatures
        }
        // Every counted comment must agree with the first readable one: the manifest's own
        // sequence and expiry are checked against it by verify's signature checks.
        let first = signatures.lazy.compactMap { TrustedComment(parsing: $0.trustedComment) }.first
        let file = TrustedComment.fileField(channel: channel, manifestName: PathText.lastComponent(manifestKey))
        return try keySet.verifyManifest(bytes: manifest, signatures: signatures, file: file, sequence: first?.sequence,
                                         expiresAt: first?.expiresAt, ed25519: KeySetChainReader.ed25519)
    }

    /// What `verify --json` carries: the chain from the pinned set, at `now`.
    package func report(now: Date) -> KeySetChainReport {
        KeySetChainReport(links: chain, firstPinned: true, truncated: truncated, manifestSigners: manifestSigners, now: now)
    }

    /// The lines verify prints: each version with its thresholds, expiry, days remaining and
    /// signers, then the manifest's signers.
    package func lines(now: Date) -> [String] {
        var lines: [String] = []
        for (index, link) in chain.enumerated() {
            let set = link.keySet
            let days = Int((set.expiresAt.timeIntervalSince(now) / 86_400).rounded(.down))
            let signed = index == 0 ? "pinned" : "signed by " + link.signers.map(\.hex).joined(separator: ", ")
            let floors = set.sequenceFloors.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key) \($0.value)" }
            let roots = set.root.keys.map(\.keyID.hex).joined(separator: ", ")
            let manifestKeys = set.manifest.keys.map(\.keyID.hex).joined(separator: ", ")
            var line = "key set \(set.version): root \(set.root.threshold) of \(set.root.keys.count) (\(roots)), "
            line += "manifest \(set.manifest.threshold) of \(set.manifest.keys.count) (\(manifestKeys)), "
            line += "expires \(set.expiresAtText) (\(days) days left), \(signed)"
            if !floors.isEmpty { line += ", sequence floors " + floors.joined(separator: ", ") }
            lines.append(line)
        }
        if truncated { lines.append("the chain goes on past \(KeySetChain.maxVersionsPerCheck) versions: a device walks it over several checks") }
        lines.append("manifest signed by \(manifestSigners.count) of key set \(current.version)'s manifest keys (\(manifestSigners.map(\.hex).joined(separator: ", "))); it needs \(current.manifest.threshold)")
        return lines
    }
}
