import Foundation
import ModelCastFormat

/// The live manifest and its detached signature are two objects, and no store replaces
/// two at once: a publish stopped between its signature write and its manifest write
/// leaves the next release's signature beside the live manifest. Every signed release
/// also keeps its signature beside its history record, immutable
/// (`manifests/00000007.json.minisig`), so a device reads that one instead, and the
/// window costs it nothing.
///
/// Nothing is weaker than with the live signature: the kept one must be made by a pinned
/// key over these very bytes, and its trusted comment must name this manifest's file,
/// channel, sequence and expiry; expiry and the sequence never going back are judged
/// after, as for any manifest. Where it was found proves nothing and is not relied on.
extension ManifestFetcher {
    /// The release and trusted comment the kept signature of the sequence `data` claims
    /// proves, when the live signature (`liveFile`, which failed with `liveFailure`) is
    /// another release's (`KeptSignatureLookup`); else the live failure, with why the kept
    /// one did not help when one was looked for.
    func keptSignatureProof(_ data: Data, liveFile: String, keys: [MinisignPublicKey], liveFailure: String) async throws -> (Release, TrustedComment) {
        let url = configuration.manifestURL.absoluteString
        func refused(_ why: String? = nil) -> ClientError { .badSignature(url: url, reason: liveFailure + (why.map { "; " + $0 } ?? "")) }
        // Read before any signature proves it, only to learn which kept signature to
        // fetch: that signature must then prove these bytes and this very sequence. Bytes
        // that do not decode have no sequence to look up: the live failure stands.
        guard let claimed = try? decodeRelease(data),
              let sequence = KeptSignatureLookup.sequence(manifestSequence: claimed.sequence, liveSignatureFile: liveFile) else { throw refused() }
        guard let keptURL = Self.keptSignatureURL(manifestURL: configuration.manifestURL, sequence: sequence) else {
            throw refused("no kept signature was looked for: the manifest URL's path does not end in a .json file, so it is not laid out as modelcast writes a target")
        }
        let kept = "the signature kept for sequence \(sequence), \(keptURL.absoluteString),"
        let file: String?
        do { file = try await signatureFile(at: keptURL) } catch let error as ClientError {
            throw refused("\(kept) could not be read: \(error)")
        }
        guard let file else { throw refused("\(kept) is not there (HTTP 404)") }
        do {
            let comment = try verify(file, source: keptURL.absoluteString, fileSource: keptURL.absoluteString, message: data, keys: keys)
            try bind(comment, to: claimed)
            return (claimed, comment)
        } catch ClientError.badSignature(_, let reason) {
            throw refused("\(kept) does not prove it either: \(reason)")
        }
    }

    /// Where the release of `sequence` keeps its signature, in the target `manifestURL` is
    /// served from (`TargetKeys`): `…/manifests/00000007.json.minisig` for
    /// `…/manifest.json`, `…/manifests/channels/beta/00000007.json.minisig` for
    /// `…/channels/beta/manifest.json`. The query is kept, as for the live signature. nil
    /// when the URL's path does not end in a `.json` file, or for a sequence below 1.
    static func keptSignatureURL(manifestURL: URL, sequence: Int64) -> URL? {
        guard sequence >= 1, var parts = URLComponents(url: manifestURL, resolvingAgainstBaseURL: true),
              let place = TargetKeys.splitAtRoot(manifestLocation: parts.percentEncodedPath) else { return nil }
        let base = TargetKeys.split(manifestKey: place.manifestKey).base
        guard base.hasSuffix(".json"), base.count > ".json".count else { return nil }
        parts.percentEncodedPath = place.root + TargetKeys.keptSignatureKey(manifestKey: place.manifestKey, sequence: sequence)
        parts.fragment = nil
        return parts.url
    }
}
