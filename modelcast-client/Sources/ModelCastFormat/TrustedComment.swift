import Foundation

/// What the signed trusted comment of a manifest says. The comment is covered by the
/// signature, so these values cannot be changed without the key.
public struct TrustedComment: Sendable, Equatable {
    public var timestamp: Int64
    public var file: String
    public var sequence: Int64
    /// The model version, or `name@version` pairs joined by `,` when the models differ.
    public var version: String
    /// RFC 3339; nil when the manifest never expires.
    public var expiresAt: String?

    public init(timestamp: Int64, file: String, sequence: Int64, version: String, expiresAt: String?) {
        self.timestamp = timestamp
        self.file = file
        self.sequence = sequence
        self.version = version
        self.expiresAt = expiresAt
    }

    /// `timestamp:… file:… sequence:… version:… expires:…`, tab-separated as minisign's own
    /// trusted comments are.
    public var text: String {
        "timestamp:\(timestamp)\tfile:\(file)\tsequence:\(sequence)\tversion:\(version)\texpires:\(expiresAt ?? "never")"
    }

    /// Parses a trusted comment modelcast wrote; nil for any other comment (e.g. minisign's default).
    public init?(parsing text: String) {
        var fields: [String: String] = [:]
        for part in text.split(separator: "\t") {
            guard let colon = part.firstIndex(of: ":") else { return nil }
            fields[String(part[..<colon])] = String(part[part.index(after: colon)...])
        }
        guard let timestamp = fields["timestamp"].flatMap({ Int64($0) }), let file = fields["file"],
              let sequence = fields["sequence"].flatMap({ Int64($0) }), let version = fields["version"],
              let expires = fields["expires"] else { return nil }
        self.init(timestamp: timestamp, file: file, sequence: sequence, version: version, expiresAt: expires == "never" ? nil : expires)
    }

    /// The `file` field of a channel's manifest signature: the manifest's name for stable
    /// (`manifest.json`), `channels/NAME/<name>` for any other channel, so a signature
    /// binds the channel and a signed beta manifest served at stable's URL is refused.
    public static func fileField(channel: String, manifestName: String) -> String {
        channel == "stable" ? manifestName : "channels/\(channel)/\(manifestName)"
    }

    /// The version field for a release: one version, or `name@version,…` when they differ.
    public static func version(of release: Release) -> String {
        let versions = Set(release.models.values.map(\.version))
        if versions.count == 1, let only = versions.first { return only }
        return release.models.keys.sorted().map { "\($0)@\(release.models[$0]!.version)" }.joined(separator: ",")
    }

    /// Where the manifest and this signed comment disagree (empty when they agree): the
    /// sequence, and the expiry (a manifest without `expires_at` may carry one only here).
    /// The server's verify and the client judge a signature by these same rules.
    public func mismatches(sequence: Int64?, expiresAt: String?) -> [String] {
        var problems: [String] = []
        if let sequence, sequence != self.sequence {
            problems.append("the manifest says sequence \(sequence), its signature says \(self.sequence)")
        }
        if let expiresAt, expiresAt != self.expiresAt {
            problems.append("the manifest says expires_at \(expiresAt), its signature says \(self.expiresAt ?? "never")")
        }
        return problems
    }
}
