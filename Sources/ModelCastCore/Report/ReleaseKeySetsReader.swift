import Foundation
import ModelCastFormat

/// Reads what the release page shows of a target's key sets: the chain from `keys/1.json`
/// as published (each link verified as a device verifies it, stopping at the first that
/// fails, which is named), and for each channel which manifest keys of the newest set
/// signed its live manifest.
enum ReleaseKeySetsReader {
    /// Adds the key sets to `page`, reading through `fetch` (target-relative keys: a
    /// directory, a store, or the host beside a manifest URL) at `now`. A target without
    /// `keys/1.json` is left as it is.
    static func add(to page: inout ReleasePage, fetch: @escaping KeySetChainReader.Fetch, now: Date) async {
        let reader = KeySetChainReader(fetch: fetch)
        var links: [KeySetLink] = []
        var problem: String?
        var truncated = false
        do {
            guard let first = try await reader.first() else { return }
            links.append(first)
            // One version at a time, so a link that fails leaves the verified prefix shown.
            while let next = try await reader.walk(from: links[links.count - 1].keySet, maxVersions: 1).links.first {
                guard links.count < ReleaseKeySets.maxVersions else {
                    truncated = true
                    break
                }
                links.append(next)
            }
        } catch {
            problem = "\(error)"
        }
        page.keySets = ReleaseKeySets(chain: KeySetChainReport(links: links, firstPinned: false, truncated: truncated, manifestSigners: [], now: now).chain,
                                      truncated: truncated, problem: problem)
        guard let newest = links.last?.keySet else { return }
        for index in page.channels.indices where page.channels[index].live != nil {
            page.channels[index].signature.keySet = await signers(of: page.channels[index], under: newest, fetch: fetch)
        }
    }

    /// Which of `keySet`'s manifest keys signed `channel`'s manifest as the target holds it now.
    private static func signers(of channel: ChannelReport, under keySet: KeySet, fetch: KeySetChainReader.Fetch) async -> ManifestKeySetSigners {
        do {
            guard let manifest = try await fetch(channel.manifestKey, TargetLayout.recordLimit) else {
                return ManifestKeySetSigners(version: keySet.version, threshold: keySet.manifest.threshold, signers: [], problem: "no manifest at \(channel.manifestKey)")
            }
            let proof = try await KeySetVerification.proveManifest(manifest, manifestKey: channel.manifestKey, channel: channel.name, under: keySet, fetch: fetch)
            return ManifestKeySetSigners(version: keySet.version, threshold: keySet.manifest.threshold, signers: proof.signers.map(\.keyID.hex), problem: nil)
        } catch let error as KeySetError {
            var signers: [String] = []
            if case let .thresholdNotMet(_, _, _, _, counted, _) = error { signers = counted.map(\.hex) }
            return ManifestKeySetSigners(version: keySet.version, threshold: keySet.manifest.threshold, signers: signers, problem: error.message)
        } catch {
            return ManifestKeySetSigners(version: keySet.version, threshold: keySet.manifest.threshold, signers: [], problem: "\(error)")
        }
    }
}
