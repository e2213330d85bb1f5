import Foundation

/// Where a target keeps what modelcast writes besides artifacts, as keys relative to the
/// target's root. The server writes these keys and the client reads them, so the rule
/// lives here, once.
///
/// - `stable`'s manifest is the manifest key itself (`manifest.json`); any other channel
///   NAME's is `channels/NAME/<manifest key>`.
/// - A manifest's history records sit under `manifests/` (`manifests/00000007.json` for
///   `manifest.json`), `manifests/<stem>/` for another manifest key, and the same beneath
///   `manifests/channels/NAME/` for a channel's.
/// - A signed release keeps its detached signature beside its record
///   (`manifests/00000007.json.minisig`), immutable: a device that finds the live signature
///   does not sign the live manifest (a publish stopped between the two writes) reads it.
public enum TargetKeys {
    /// The channel a target serves at the manifest key itself.
    public static let stableChannel = "stable"
    /// Where every other channel's manifest lives.
    public static let channelsFolder = "channels/"

    /// The manifest key of `channel` for the target's manifest key `base`.
    public static func manifestKey(channel: String, base: String = "manifest.json") -> String {
        channel == stableChannel ? base : channelsFolder + channel + "/" + base
    }

    /// The channel a manifest key belongs to and the target's manifest key it derives from:
    /// `channels/beta/manifest.json` → (beta, manifest.json); any other key is stable's.
    public static func split(manifestKey: String) -> (channel: String, base: String) {
        guard manifestKey.hasPrefix(channelsFolder) else { return (stableChannel, manifestKey) }
        let rest = manifestKey.dropFirst(channelsFolder.count)
        guard let slash = rest.firstIndex(of: "/") else { return (stableChannel, manifestKey) }
        return (String(rest[..<slash]), String(rest[rest.index(after: slash)...]))
    }

    /// Where minisign looks for a file's signature: `manifest.json.minisig` beside `manifest.json`.
    public static func signatureKey(forManifestKey manifestKey: String) -> String { manifestKey + ".minisig" }

    /// The history folder of a manifest key: `manifests/` for `manifest.json`,
    /// `manifests/<stem>/` for any other manifest, both beneath `manifests/channels/NAME/`
    /// for channel NAME's (`manifests/channels/beta/` for `channels/beta/manifest.json`).
    public static func historyPrefix(manifestKey: String) -> String {
        let (channel, base) = split(manifestKey: manifestKey)
        let folder = channel == stableChannel ? "manifests/" : "manifests/" + channelsFolder + channel + "/"
        return base == "manifest.json" ? folder : folder + String(base.dropLast(".json".count)) + "/"
    }

    /// The key of the history record of `sequence`: its prefix and the sequence in at least
    /// eight digits (`manifests/00000007.json`).
    public static func historyKey(manifestKey: String, sequence: Int64) -> String {
        historyPrefix(manifestKey: manifestKey) + paddedSequence(sequence) + ".json"
    }

    /// Where a signed release keeps its detached signature beside its history record
    /// (`manifests/00000007.json.minisig`); never replaced once written.
    public static func keptSignatureKey(manifestKey: String, sequence: Int64) -> String {
        signatureKey(forManifestKey: historyKey(manifestKey: manifestKey, sequence: sequence))
    }

    /// Where a release signed by several keys keeps its signature list beside its history
    /// record (`manifests/00000007.json.sigs`); never replaced once written.
    public static func keptSignatureListKey(manifestKey: String, sequence: Int64) -> String {
        historyKey(manifestKey: manifestKey, sequence: sequence) + ".sigs"
    }

    /// Splits the text of a manifest's URL or URL path at its target's root, as the server
    /// lays a target out: `…/channels/NAME/FILE` (NAME a channel name) is channel NAME's
    /// manifest under `…/`, any other `…/FILE` is stable's under its own directory. The
    /// root keeps its trailing `/`; nothing is decoded. nil when the text has no `/`.
    public static func splitAtRoot(manifestLocation text: String) -> (root: String, manifestKey: String)? {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 2 else { return nil }
        let count = parts.count
        // A folder under channels/ that is no channel name is an ordinary folder (stable's layout).
        if count >= 4, parts[count - 3] + "/" == channelsFolder, (try? ChannelName(String(parts[count - 2]))) != nil {
            return (parts[..<(count - 3)].joined(separator: "/") + "/", parts[(count - 3)...].joined(separator: "/"))
        }
        return (parts[..<(count - 1)].joined(separator: "/") + "/", String(parts[count - 1]))
    }

    /// `7` → `00000007`; more digits once past eight (as `%08lld` writes it).
    private static func paddedSequence(_ sequence: Int64) -> String {
        let digits = String(sequence.magnitude)
        let padded = String(repeating: "0", count: max(0, (sequence < 0 ? 7 : 8) - digits.count)) + digits
        return sequence < 0 ? "-" + padded : padded
    }
}
