import Foundation

/// `modelcast report`: what a target holds, channel by channel, at one moment — the data
/// the release page draws and `report --json` prints (schema/cli/report.schema.json).
/// Every value is read from the target; the page escapes each one as it draws it.
package struct ReleasePage: Codable, Sendable, Equatable {
    package static let formatName = "modelcast-report/1"

    package var format = ReleasePage.formatName
    /// The target or manifest URL read.
    package let target: String
    /// The moment the page describes (RFC 3339): "now" on the rollout curve, days left.
    package let at: String
    package var channels: [ChannelReport]
    /// The target's key set chain as published, when it has `keys/1.json`.
    package var keySets: ReleaseKeySets?

    enum CodingKeys: String, CodingKey { case format, target, at, channels, keySets = "key_sets" }
}

/// A target's key set chain as published (`keys/N.json`), walked from `keys/1.json` with
/// the rules a device applies from the key set its app pins: the page reads the chain from
/// the target itself, so it shows what is published, not what any app trusts.
package struct ReleaseKeySets: Codable, Sendable, Equatable {
    /// Oldest first: each version whose link verified.
    package let chain: [KeySetChainReport.Version]
    /// True when the page stopped reading at `ReleaseKeySets.maxVersions` versions.
    package let truncated: Bool
    /// Why the chain stops before the target's last `keys/N.json` (a link that does not
    /// verify, a document that cannot be read), or nil.
    package let problem: String?

    /// The most versions the page reads: a host serving an endless chain cannot hold it up.
    package static let maxVersions = 1000
}

/// One channel: its live release, rollout, signature, history and (with `--verify`) checks.
package struct ChannelReport: Codable, Sendable, Equatable {
    package let name: String
    package let manifestKey: String
    /// The release devices get now; nil when nothing readable is live.
    package let live: LiveRelease?
    /// The staged rollout the live release is in, or ended (halted, completed); nil for none.
    package let rollout: RolloutReport?
    package var signature: SignatureReport
    /// Newest first.
    package let history: [TimelineEntry]
    /// Set by `--verify`.
    package var verify: VerifySummary?
    /// What could not be read, or reads oddly (a manifest no record explains, an unusable index).
    package var notes: [String]
    /// The verify run's exit status (not part of the JSON: `verify` holds the outcome).
    var verifyStatus: ExitStatus?

    enum CodingKeys: String, CodingKey {
        case name, live, rollout, signature, history, verify, notes
        case manifestKey = "manifest_key"
    }
}

/// The live release: its models (and their variants) with versions, sizes and hashes.
package struct LiveRelease: Codable, Sendable, Equatable {
    package let sequence: Int64
    package let publishedAt: String
    package let expiresAt: String?
    package let profile: String
    package let minAppVersion: String?
    /// One entry per unit a device installs: a model, or each variant of a model.
    package let models: [ModelReport]
    /// Bytes of every file the release names.
    package let totalSize: Int64

    enum CodingKeys: String, CodingKey {
        case sequence, profile, models
        case publishedAt = "published_at", expiresAt = "expires_at", minAppVersion = "min_app_version", totalSize = "total_size"
    }
}

package struct ModelReport: Codable, Sendable, Equatable {
    package let name: String
    /// The variant's name, for a model published with variants.
    package let variant: String?
    /// What a device needs to take the variant (`memory>=8GiB, platform ios>=17`).
    package let requires: String?
    package let version: String
    package let size: Int64
    /// True when the model carries an OpenSSF model signature.
    package let modelSigned: Bool
    /// `meta` fields as JSON text, by key.
    package let meta: [String: String]
    package let files: [FileReport]
    /// The model's licence (a variant shows its model's).
    package var licence: ReleaseLicence?
    /// When devices may download it (a variant shows its model's).
    package var downloadConditions: ReleaseDownloadConditions?
    /// What it takes installed (each variant its own).
    package var storage: ReleaseStorage?

    enum CodingKeys: String, CodingKey {
        case name, variant, requires, version, size, meta, files, licence, storage
        case modelSigned = "model_signed"
        case downloadConditions = "download_conditions"
    }
}

package struct FileReport: Codable, Sendable, Equatable {
    /// Where it goes inside the model's directory.
    package let name: String
    package let key: String
    package let size: Int64
    package let sha256: String
}

/// A staged rollout: where it stands now and how its share moved over time.
package struct RolloutReport: Codable, Sendable, Equatable {
    package enum State: String, Codable, Sendable {
        /// Some devices run the candidate, or a schedule has steps to come.
        case inProgress = "in progress"
        /// Stopped at 0 %: every device on the fallback.
        case halted
        /// Finished: every device on the candidate.
        case complete
    }

    /// One point of the share over time: from `at` on, `percent` of devices run the candidate.
    package struct Point: Codable, Sendable, Equatable {
        package let at: String
        package let percent: Double
    }

    package let state: State
    /// The candidate's share at the page's moment.
    package let percentNow: Double
    package let candidateSequence: Int64
    package let fallbackSequence: Int64?
    package let candidateVersions: [String: String]
    package let fallbackVersions: [String: String]
    package let startedAt: String
    /// The share as the releases set it, oldest first: a step function (each point holds
    /// until the next). Points after the page's moment are what a schedule will do.
    package let curve: [Point]
    /// The schedule the rollout was given (the latest one, even if a halt stopped it); nil when it had none.
    package let schedule: [Point]?

    enum CodingKeys: String, CodingKey {
        case state, curve, schedule
        case percentNow = "percent_now", candidateSequence = "candidate_sequence", fallbackSequence = "fallback_sequence"
        case candidateVersions = "candidate_versions", fallbackVersions = "fallback_versions", startedAt = "started_at"
    }
}

/// The live manifest's signature, as stored (checked only by `--verify` with `--public-key`).
package struct SignatureReport: Codable, Sendable, Equatable {
    package enum State: String, Codable, Sendable {
        case signed, unsigned
        /// A signature is stored but cannot be read as minisign.
        case unreadable
    }

    package let state: State
    /// The minisign key id (hex) that signed the live manifest.
    package let keyID: String?
    /// The sequence its trusted comment binds.
    package let signedSequence: Int64?
    /// When the live manifest stops being accepted (its `expires_at`, or the trusted comment's).
    package let expiresAt: String?
    /// Days from the page's moment to `expiresAt` (one decimal; negative once expired).
    package let daysLeft: Double?
    /// The verify run's signature check, when there was one: pass, warn or fail.
    package var checked: VerifyCheck.Status?
    /// Under a key set: which of the newest key set's manifest keys signed the live manifest.
    package var keySet: ManifestKeySetSigners?

    enum CodingKeys: String, CodingKey {
        case state, checked
        case keySet = "key_set"
        case keyID = "key_id", signedSequence = "signed_sequence", expiresAt = "expires_at", daysLeft = "days_left"
    }
}

/// Which manifest keys of a target's newest key set signed a channel's live manifest.
package struct ManifestKeySetSigners: Codable, Sendable, Equatable {
    /// The newest key set's version.
    package let version: Int64
    /// How many of its manifest keys must sign.
    package let threshold: Int
    /// Its manifest keys whose signatures over the live manifest counted (hex key ids).
    package let signers: [String]
    /// Why the threshold is not met (who signed, why the others did not count), or nil.
    package let problem: String?

    package init(version: Int64, threshold: Int, signers: [String], problem: String?) {
        self.version = version
        self.threshold = threshold
        self.signers = signers
        self.problem = problem
    }
}

/// One release in the history, with what it changed against the release it replaced.
package struct TimelineEntry: Codable, Sendable, Equatable {
    package let sequence: Int64
    package let publishedAt: String
    package let state: HistoryEntry.State
    package let action: HistoryEntry.Action?
    /// The action in words ("rolled back to sequence 1 (m 1.0.0)").
    package let detail: String?
    /// Model → version.
    package let versions: [String: String]
    /// Versions it changed: "m 1.0.0 → 2.0.0", "m added", "m removed".
    package let changes: [String]
    /// The candidate's share the record set, for a rollout record.
    package let rolloutPercent: Double?

    enum CodingKeys: String, CodingKey {
        case sequence, state, action, detail, versions, changes
        case publishedAt = "published_at", rolloutPercent = "rollout_percent"
    }
}

/// A verify run's outcome for one channel: every check.
package struct VerifySummary: Codable, Sendable, Equatable {
    package let passed: Bool
    package let failures: Int
    package let warnings: Int
    package let checks: [VerifyCheck]

    package init(_ report: VerifyReport) {
        passed = report.passed
        failures = report.failures
        warnings = report.warnings
        checks = report.checks
    }
}
