import Foundation
import ModelCastFormat

/// What the client remembers between launches (`state.json`). Every field may be missing
/// (a file written by an older client reads as it was meant).
struct ClientState: Codable {
    struct Installed: Codable {
        var version: String
        /// The version directory's name.
        var id: String
        /// Version directories kept for a local rollback, newest first.
        var previous: [String]
    }

    /// A version reported unusable on this device (`reportUnusable`).
    struct Refusal: Codable, Equatable {
        /// The version directory's name (`ModelsDirectory.versionID`).
        var id: String
        var version: String
        var variant: String?
        var reason: String
    }

    /// What the update that saved a manifest's ETag covered: a 304 stands for "nothing to
    /// do" only for a call that covers no more (the same device, overrides and models, a
    /// policy up to this one).
    struct Coverage: Codable, Equatable {
        var policy: DownloadPolicy
        /// `UpdateCheck.coverageContext`: a digest of the device profile and the app's overrides.
        var context: String
    }

    /// What a 304 answers for: the manifest whose ETag `etags` holds, as this client proved it.
    struct Trusted: Codable, Equatable {
        /// When it stops being fresh (the earlier of its `expires_at` and its signature's),
        /// as the manifest spells it; nil when it never does.
        var expiresAt: String?
    }

    /// The newest key set this client verified by walking the chain from the app's
    /// (`ClientConfiguration.trustedKeySet`): the next check walks on from it.
    struct VerifiedKeySet: Codable, Equatable {
        var version: Int64
        /// The document's exact bytes, base64.
        var document: String
    }

    /// The newest key set verified (nil: none past the app's).
    var keySet: VerifiedKeySet?
    /// The highest sequence accepted, per manifest URL (a channel switch starts a new one).
    var sequences: [String: Int64] = [:]
    /// The ETag of the manifest last accepted, per manifest URL.
    var etags: [String: String] = [:]
    /// What the update that saved each ETag covered, per manifest URL. Without it (a
    /// state written by an older client) the ETag is not sent.
    var coverage: [String: Coverage] = [:]
    /// The manifest each ETag stands for, per manifest URL. A 304 leaves the device on it
    /// only while it is fresh; without it (a state written by an older client, which did
    /// not keep the expiry) the ETag is not sent.
    var trusted: [String: Trusted] = [:]
    var installed: [String: Installed] = [:]
    /// Per model, the version this device refuses until the manifest names another one.
    var refused: [String: Refusal] = [:]

    init() {}

    enum CodingKeys: String, CodingKey { case sequences, etags, coverage, trusted, installed, refused, keySet }

    init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        sequences = try c.decodeIfPresent([String: Int64].self, forKey: .sequences) ?? [:]
        etags = try c.decodeIfPresent([String: String].self, forKey: .etags) ?? [:]
        coverage = try c.decodeIfPresent([String: Coverage].self, forKey: .coverage) ?? [:]
        trusted = try c.decodeIfPresent([String: Trusted].self, forKey: .trusted) ?? [:]
        installed = try c.decodeIfPresent([String: Installed].self, forKey: .installed) ?? [:]
        refused = try c.decodeIfPresent([String: Refusal].self, forKey: .refused) ?? [:]
        keySet = try c.decodeIfPresent(VerifiedKeySet.self, forKey: .keySet)
    }

    static func load(_ path: URL) throws -> ClientState {
        guard let data = FileManager.default.contents(atPath: path.path) else { return ClientState() }
        do { return try JSONDecoder().decode(ClientState.self, from: data) } catch {
            throw ClientError.io(path: path.path, reason: "unreadable state")
        }
    }

    /// Written to a temporary file and renamed over the old one.
    func save(_ path: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        do {
            try encoder.encode(self).write(to: path, options: .atomic)
        } catch {
            throw ClientError.io(path, error)
        }
    }
}

extension ClientState.Refusal {
    func refusedVersion(model: String) -> RefusedVersion {
        RefusedVersion(model: model, version: version, variant: variant, id: id, reason: reason)
    }
}
