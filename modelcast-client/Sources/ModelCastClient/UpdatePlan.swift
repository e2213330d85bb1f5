import Foundation
import ModelCastFormat

/// What an update did.
public enum UpdateOutcome: Sendable, Equatable {
    /// The server said the manifest had not changed (HTTP 304) since an update that covered
    /// at least the models this one covers.
    case notModified
    /// The manifest was accepted; the models the update covers already were the ones it names.
    case upToDate(sequence: Int64)
    /// The models whose installed version changed, by name (a rollback included).
    case updated(sequence: Int64, models: [String: String])
    /// `ClientConfiguration.shouldDownload` said not now, given this plan: nothing was
    /// downloaded or changed (not even a switch to a kept version), nothing was saved,
    /// and the next update asks again.
    case deferred(UpdatePlan)
}

/// How one file of an update was downloaded.
public struct FileDownload: Sendable, Equatable {
    public let model: String
    /// The file's name in the manifest.
    public let file: String
    /// The file's size.
    public let size: Int64
    /// Bytes received for it in this update (a resumed download counts only the rest).
    public let fetchedBytes: Int64
    /// The kept versions whose files seeded a segmented download, the one in use first,
    /// joined by ", " (`2.0.0, 1.0.0`); nil for a plain download.
    public let seededFrom: String?
    /// The range requests of a segmented download (repairs included); nil for a plain download.
    public let rangeRequests: Int?
    /// How its bytes came: streamed (the default, and every segmented download) or through
    /// the background session's download task (`ClientConfiguration.backgroundDownloads`).
    public internal(set) var transfer: Transfer = .stream

    /// How a file's bytes came.
    public enum Transfer: String, Sendable, Equatable {
        /// A data task, hashed as it was written.
        case stream
        /// A background `URLSession` download task, proven from the file it delivered.
        case downloadTask
    }
}

/// What the manifest asks of this device, before anything is downloaded: for `check()`,
/// the plan of `update()`; for `check(_:)`, that of `update(_:)` with the same policy.
public struct UpdatePlan: Sendable, Equatable {
    public let sequence: Int64
    /// True when a staged rollout put this device in the candidate's cohort (or there is no rollout).
    public let takesCandidate: Bool
    /// Model name → the version this device should run, for the models the call covers
    /// (by their download policy) and installs: a model whose variants this device meets
    /// none of, a refused version and a waiting model are not here (see `variants`,
    /// `refused` and `waiting`).
    public let versions: [String: String]
    /// Bytes still to download for them (kept versions and finished downloads excluded).
    public let bytesToDownload: Int64
    /// The models whose installed version the update changes, name → version: downloaded,
    /// or a kept version switched back to (no download).
    public let installs: [String: String]
    /// For each covered model with variants, the variant this device takes (`chosen`; nil
    /// when it meets none: the model is left as it is and nothing is downloaded for it) and
    /// why it passed over the ones before it (`skipped`, each with its unmet requirements).
    public let variants: [String: VariantChoice]
    /// Every model of the manifest this device follows (the rollout's choice, filtered by
    /// `ClientConfiguration.models`) → its download policy: the app's override
    /// (`ClientConfiguration.downloadPolicies`), else the manifest's, else `prefetch`.
    public let policies: [String: DownloadPolicy]
    /// Covered models whose version in the manifest was reported unusable on this device
    /// (`ModelUpdater.reportUnusable`): the device keeps the version it runs until the
    /// manifest names another one.
    public let refused: [String: RefusedVersion]
    /// Covered models this call does not download or install, and why: a licence not
    /// accepted (`ModelUpdater.acceptLicence`), a download condition the device does not
    /// meet now or the app has not reported (`DeviceConditions`), a condition this client
    /// does not know. Nothing of them is requested; the version installed stays.
    public let waiting: [String: WaitReason]
    /// On-demand models the update removes to stay within `ClientConfiguration.storageBudget`,
    /// in the order they go (the lowest storage priority first, then the least recently used).
    public let evictions: [String]
}

/// A version of a model this device refuses after `ModelUpdater.reportUnusable`.
public struct RefusedVersion: Sendable, Equatable {
    public let model: String
    public let version: String
    /// The variant it was, for a model with variants.
    public let variant: String?
    /// Its version directory's name (`VERSION-<digest of its files>`): a release of the same
    /// version with other files is another version, and is not refused.
    public let id: String
    /// The reason the app gave.
    public let reason: String
}
