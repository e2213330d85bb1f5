import Foundation

/// Where a target keeps what modelcast writes besides artifacts: the history records
/// beside each manifest key, and how large a record or manifest may be read back.
/// Publish, rollback, prune and verify all read a target through these.
public enum TargetLayout {
    /// Largest manifest or history record modelcast reads back.
    public static let recordLimit = 16 << 20

    /// The history key for a manifest key and sequence: `manifests/00000042.json`
    /// for `manifest.json`, `manifests/<stem>/00000042.json` for any other manifest.
    public static func historyPrefix(manifestKey: String) -> String {
        manifestKey == "manifest.json" ? "manifests/" : "manifests/" + String(manifestKey.dropLast(".json".count)) + "/"
    }

    /// The key of the history record of `sequence`.
    static func historyKey(manifestKey: String, sequence: Int64) -> String {
        historyPrefix(manifestKey: manifestKey) + String(format: "%08lld", sequence) + ".json"
    }

    /// The live manifest bytes a record renders to (its own profile).
    static func rendering(of record: Release) -> Data? {
        guard let profile = ManifestProfile(rawValue: record.profile), let value = try? profile.render(record) else { return nil }
        return Data(value.serialized().utf8)
    }
}
