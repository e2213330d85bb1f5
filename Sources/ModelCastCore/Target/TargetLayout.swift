import Foundation

/// Where a target keeps what modelcast writes besides artifacts: the history records
/// beside each manifest key, and how large a record or manifest may be read back.
/// Publish, rollback, prune and verify all read a target through these.
package enum TargetLayout {
    /// Largest manifest or history record modelcast reads back.
    package static let recordLimit = 16 << 20

    /// The history folder of a manifest key: `manifests/` for `manifest.json`,
    /// `manifests/<stem>/` for any other manifest.
    /// A channel's history is the same beneath `manifests/channels/NAME/`
    /// (`manifests/channels/beta/00000042.json` for `channels/beta/manifest.json`).
    package static func historyPrefix(manifestKey: String) -> String {
        TargetKeys.historyPrefix(manifestKey: manifestKey)
    }

    /// The history index of a manifest key (`HistoryIndex`): `_modelcast/history-index.json`
    /// for `manifest.json`, `_modelcast/history-index/<key>` for any other
    /// (`_modelcast/history-index/channels/beta/manifest.json`): the manifest key itself,
    /// unescaped, as no `%` may appear in a key S3-compatible servers all sign alike.
    /// Not under `manifests/`, where every object is immutable (hosts cache it for a year,
    /// upload scripts never overwrite it): the index changes with every release.
    package static func indexKey(manifestKey: String) -> String {
        manifestKey == "manifest.json" ? "_modelcast/history-index.json" : "_modelcast/history-index/" + manifestKey
    }

    /// The content-addressed key of a tree model's file: `models/NAME/blobs/<sha256 hex>`.
    /// Every version whose tree holds these bytes names this one object (stored once,
    /// never overwritten); it cannot collide with `models/NAME/VERSION/…`, as `blobs` is
    /// no semantic version.
    package static func blobKey(model: String, sha256: SHA256Digest) -> String {
        "models/\(model)/blobs/\(sha256.hex)"
    }

    /// Where a model signature bundle of `model` is stored: named by its own bytes, so it
    /// is never replaced (a new signature of the same files is another object).
    package static func modelSignatureKey(model: String, bundle sha256: SHA256Digest) -> String {
        "models/\(model)/signatures/\(sha256.hex).sigstore.json"
    }

    /// Where the segment index of an artifact of `model` is stored: named by the
    /// artifact's SHA-256 and the scheme's version, so the same bytes always have the same
    /// index under the same key (stored once, never overwritten).
    package static func segmentIndexKey(model: String, artifact sha256: SHA256Digest) -> String {
        "models/\(model)/segments/\(sha256.hex).s1.mcsx"
    }

    /// How a history record is stored: JSON, immutable under its key.
    static func recordMetadata(of data: Data) throws -> ObjectMetadata {
        try ObjectMetadata(of: data, cacheControl: CachePolicy.immutable, contentType: "application/json")
    }

    /// The key of the history record of `sequence`.
    static func historyKey(manifestKey: String, sequence: Int64) -> String {
        TargetKeys.historyKey(manifestKey: manifestKey, sequence: sequence)
    }

    /// Where a signed release keeps its detached signature beside its history record
    /// (`manifests/00000007.json.minisig`), so the signature of whatever manifest is live
    /// can be put back (`SignaturePair`), and so that devices accept that manifest while
    /// the live signature does not sign it (ModelCastClient reads it; `verify` says so).
    /// Immutable, like the record.
    static func signatureRecordKey(manifestKey: String, sequence: Int64) -> String {
        TargetKeys.keptSignatureKey(manifestKey: manifestKey, sequence: sequence)
    }

    /// The signature list a release signed by several keys keeps beside its record
    /// (`manifests/00000007.json.sigs`), immutable like the record.
    static func signatureListRecordKey(manifestKey: String, sequence: Int64) -> String {
        TargetKeys.keptSignatureListKey(manifestKey: manifestKey, sequence: sequence)
    }

    /// Every signature object a release may keep beside its record: what goes when the record goes.
    static func keptSignatureKeys(manifestKey: String, sequence: Int64) -> [String] {
        [signatureRecordKey(manifestKey: manifestKey, sequence: sequence), signatureListRecordKey(manifestKey: manifestKey, sequence: sequence)]
    }

    /// The live manifest bytes a record renders to (its own profile).
    static func rendering(of record: Release) -> Data? {
        // try?: a record that does not render matches no live manifest (the state reports it as not modelcast's).
        guard let profile = ManifestProfile(rawValue: record.profile), let value = try? profile.render(record) else { return nil }
        return Data(value.serialized().utf8)
    }
}
