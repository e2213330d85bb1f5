import Foundation
import ModelCastFormat

/// How a `ModelUpdater` finds, trusts and keeps models.
public struct ClientConfiguration: Sendable {
    /// The channel's manifest: `https://cdn.example.com/models/manifest.json` for stable,
    /// `…/channels/beta/manifest.json` for beta (`manifestURL(base:channel:)`).
    public var manifestURL: URL
    /// The channel this app follows. The manifest must say it is this channel's (and a
    /// signed one's trusted comment must name it), so another channel's manifest served at
    /// this URL is refused. Defaults to the channel `manifestURL` names in modelcast's
    /// layout: NAME for `…/channels/NAME/manifest.json`, else `stable`.
    public var channel: String
    /// Where the client keeps its state, downloads and installed models, e.g.
    /// `Application Support/ModelCast` (the client adds `models/`, `downloads/` and
    /// `state.json` under it). Nothing outside it is ever written or deleted; on Apple
    /// platforms it is excluded from backups (`excludeFromBackup`).
    public var directory: URL
    /// A stable id of this device for staged rollouts (a random UUID kept from the first
    /// launch is enough). It never leaves the device.
    public var deviceID: String
    /// Trusted minisign public keys (the `.pub` file's text or its base64 line). More than
    /// one during a key rotation. With any key, an unsigned manifest is refused.
    public var publicKeys: [String]
    /// The key set the app ships (`keys/N.json`'s bytes, as `modelcast keys create` wrote
    /// them), instead of `publicKeys`: on each check the client walks the target's chain
    /// from it (or from the newest key set it verified before), `keys/(N+1).json` and its
    /// `.sigs`, each signed by the root threshold of the previous and of its own, at most
    /// `KeySetChain.maxVersionsPerCheck` per check, and proves the manifest by the newest
    /// set's manifest keys and threshold. Setting both this and `publicKeys` is refused.
    public var trustedKeySet: Data?
    /// The key OpenSSF model signatures must be made with (`modelcast keygen
    /// --model-signing`'s public key). When set, every model version the client is about
    /// to switch to — a new one, or a kept one it goes back to — must carry a
    /// `model_signature` in the manifest whose bundle this key verifies and whose statement
    /// lists exactly the version's files on disk; anything else is refused before the
    /// switch (`ClientError.modelSignatureMissing`, `.modelSignatureUntrustedKey`,
    /// `.badModelSignature`, `.modelSignatureMismatch`). nil: no model signature is fetched.
    public var modelSigningPublicKey: ModelSigningPublicKey?
    /// The app's version, for `min_app_version`; nil skips that gate.
    public var appVersion: String?
    /// Install only these models of the manifest (nil: every model).
    public var models: Set<String>?
    /// Versions kept besides the current one, per model, for an instant local rollback.
    public var keepPreviousVersions: Int
    /// Largest manifest read (default 4 MiB); a larger one is refused
    /// (`ClientError.manifestTooLarge`) and its connection closed within 64 KiB more.
    /// (A detached signature is read up to 16 KiB, a segment index and a model signature
    /// bundle up to the size the manifest gives them, an artifact up to its size, each
    /// with the same 64 KiB bound on what is read past it.)
    public var maxManifestBytes: Int
    /// Attempts per download after a dropped connection, a server error or a transfer
    /// abandoned as too slow (default 3; each resumes). A model signature bundle is retried
    /// too, but not after a too slow or overlong attempt; the manifest, its signature and a
    /// segment index are not retried.
    public var retries: Int
    /// Seconds a request may wait for data before it counts as dropped (default 30): an
    /// idle timeout, which every byte resets, so a trickle never reaches it; the two
    /// bounds below end a trickle.
    public var requestTimeout: TimeInterval
    /// Slow retrieval (default 1024 bytes per second): a request whose body brings fewer
    /// than `minimumTransferRate × transferRateWindow` bytes in any window of
    /// `transferRateWindow` seconds from its start is abandoned (`ClientError.tooSlow`)
    /// and its connection closed. An artifact's download tries again, resuming, up to
    /// `retries` times, so a server that only trickles costs a file at most
    /// (retries + 1) × `transferRateWindow` seconds and the backoff; other requests are not
    /// retried after it. 0 turns the check off. A body that ends within its first window
    /// is never judged, so a small object on a slow link is fine.
    public var minimumTransferRate: Int
    /// Seconds `minimumTransferRate` is measured over, each window from the request's
    /// start (default 30).
    public var transferRateWindow: TimeInterval
    /// The longest a metadata request (the manifest, its signature, a segment index, a
    /// model-signature bundle) may take from its start to its last byte (default 60 s),
    /// however fast its bytes come; past it the request is abandoned
    /// (`ClientError.deadlineExceeded`) and its connection closed.
    public var metadataDeadline: TimeInterval
    /// The largest unpacked size of one model version the client installs: its plain
    /// files (refused before they are downloaded) plus the sizes its zips' entries declare
    /// (refused before anything is unpacked), `ClientError.installTooLarge`. nil: no cap
    /// but the volume's free space, which is checked before anything is unpacked too.
    public var maxInstallBytes: Int64?
    /// Seconds a call waits for another process using `directory` (an app extension, a
    /// second instance of the app) to finish its update or revert, before it gives up with
    /// `ClientError.directoryBusy`. 0: do not wait.
    public var directoryLockTimeout: TimeInterval
    /// Mark `directory` as excluded from iCloud and iTunes backups (Apple platforms; the
    /// models can be downloaded again). Ignored elsewhere.
    public var excludeFromBackup: Bool
    /// What this device is, for choosing among a model's variants: by default
    /// `DeviceProfile.current` (memory, platform, OS version, architecture, the GPU and
    /// Neural Engine where the system reports them). Override any field: the capabilities
    /// the app declares, less memory to leave room for the app, a user's choice.
    public var device: DeviceProfile
    /// The app's download policy per model name, over the manifest's `download` (which
    /// defaults to `prefetch`). See `ModelUpdater.update(_:)`.
    public var downloadPolicies: [String: DownloadPolicy]
    /// Asked before an update downloads anything, with its plan (the models it installs,
    /// their variants, the bytes to download): false defers the update, which then
    /// downloads and changes nothing and returns `.deferred`. Not asked when nothing would
    /// be downloaded, nor by `request(_:)` (the app asked for that model). nil: always go ahead.
    /// (A model's own network and charging rules are the manifest's `download_conditions`,
    /// judged with `conditions`; blanket rules can go in the app's `URLSessionConfiguration`.)
    public var shouldDownload: (@Sendable (UpdatePlan) async -> Bool)?
    /// Downloads that go on while the app is suspended: files of at least its
    /// `minimumFileSize` go through a background `URLSession` download task and are proven
    /// from the file before they are installed (`BackgroundDownloads`; Apple platforms: on
    /// Linux every file streams). nil (the default): every file streams through a data
    /// task, hashed as it is written.
    public var backgroundDownloads: BackgroundDownloads?
    /// The clock (tests pin it): expiry and rollout schedules are judged by it.
    public var now: @Sendable () -> Date
    /// Bytes every installed version (current and kept, every model) may take together;
    /// nil: no budget. An update over it evicts on-demand models first (lowest
    /// `storage.priority`, then least recently used: `ModelUpdater.beginUse`), else is
    /// refused before anything is downloaded (`ClientError.overStorageBudget`).
    public var storageBudget: Int64?
    /// The network and charging state the app reports, for models with download conditions
    /// (`ModelUpdater.setConditions(_:)` changes it later). Not reported (nil), a model that
    /// needs it waits.
    public var conditions: DeviceConditions

    public init(
        manifestURL: URL, directory: URL, deviceID: String, publicKeys: [String] = [], trustedKeySet: Data? = nil, modelSigningPublicKey: ModelSigningPublicKey? = nil,
        appVersion: String? = nil,
        models: Set<String>? = nil, keepPreviousVersions: Int = 1, maxManifestBytes: Int = ManifestLimits.maxBytes, retries: Int = 3,
        requestTimeout: TimeInterval = 30, minimumTransferRate: Int = 1024, transferRateWindow: TimeInterval = 30,
        metadataDeadline: TimeInterval = 60, maxInstallBytes: Int64? = nil, directoryLockTimeout: TimeInterval = 30,
        channel: String? = nil, excludeFromBackup: Bool = true,
        device: DeviceProfile = .current, downloadPolicies: [String: DownloadPolicy] = [:],
        shouldDownload: (@Sendable (UpdatePlan) async -> Bool)? = nil, backgroundDownloads: BackgroundDownloads? = nil,
        now: @escaping @Sendable () -> Date = { Date() }, storageBudget: Int64? = nil, conditions: DeviceConditions = DeviceConditions()
    ) {
        self.storageBudget = storageBudget
        self.conditions = conditions
        self.manifestURL = manifestURL
        self.channel = channel ?? Self.channel(ofManifestURL: manifestURL)
        self.excludeFromBackup = excludeFromBackup
        self.directory = directory
        self.deviceID = deviceID
        self.publicKeys = publicKeys
        self.trustedKeySet = trustedKeySet
        self.modelSigningPublicKey = modelSigningPublicKey
        self.appVersion = appVersion
        self.models = models
        self.keepPreviousVersions = keepPreviousVersions
        self.maxManifestBytes = maxManifestBytes
        self.retries = retries
        self.requestTimeout = requestTimeout
        self.minimumTransferRate = minimumTransferRate
        self.transferRateWindow = transferRateWindow
        self.metadataDeadline = metadataDeadline
        self.maxInstallBytes = maxInstallBytes
        self.directoryLockTimeout = directoryLockTimeout
        self.device = device
        self.downloadPolicies = downloadPolicies
        self.shouldDownload = shouldDownload
        self.backgroundDownloads = backgroundDownloads
        self.now = now
    }

    /// The manifest URL of `channel` under a target's base URL: `manifest.json` for stable,
    /// `channels/NAME/manifest.json` for any other (the layout `modelcast publish --channel` writes).
    public static func manifestURL(base: URL, channel: String = "stable", manifestKey: String = "manifest.json") -> URL {
        channel == "stable" ? base.appendingPathComponent(manifestKey) : base.appendingPathComponent("channels").appendingPathComponent(channel).appendingPathComponent(manifestKey)
    }

    /// The channel a manifest URL names in modelcast's layout: NAME for
    /// `…/channels/NAME/<manifest>`, else `stable`.
    public static func channel(ofManifestURL url: URL) -> String {
        let parts = url.path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[parts.count - 3] == "channels" else { return "stable" }
        return String(parts[parts.count - 2])
    }

    /// `channel` as a channel name. `validate()` refuses any other, so the stable fallback
    /// (`try?`) is never taken by an updater that started.
    var channelName: ChannelName { (try? ChannelName(channel)) ?? .stable }

    /// The channel of a manifest URL the state keeps (as text). A URL that is not one, or
    /// names no valid channel, is stable's stream (`try?`: the state's keys are not trusted input).
    static func channelName(ofManifestURL text: String) -> ChannelName {
        guard let url = URL(string: text) else { return .stable }
        return (try? ChannelName(channel(ofManifestURL: url))) ?? .stable
    }

    /// The values the client refuses to start with, named (`ClientError.configuration`).
    /// `ModelUpdater.init` calls it; an app or tool that stores a configuration calls it
    /// first, to refuse a bad value before anything is written.
    public func validate() throws {
        guard let scheme = manifestURL.scheme?.lowercased(), scheme == "http" || scheme == "https", manifestURL.host != nil else {
            throw ClientError.configuration(reason: "manifestURL \(quotedValue(manifestURL.absoluteString)) is not an http or https URL")
        }
        guard manifestURL.user == nil, manifestURL.password == nil else {
            throw ClientError.configuration(reason: "manifestURL carries a user name or password")
        }
        do { _ = try ChannelName(channel) } catch {
            throw ClientError.configuration(reason: "channel \(quotedValue(channel)) is not a channel name (lowercase letters, digits and '-')")
        }
        guard directory.isFileURL else { throw ClientError.configuration(reason: "directory \(quotedValue(directory.absoluteString)) is not a file URL") }
        if let appVersion {
            do { _ = try AppVersion(appVersion) } catch {
                throw ClientError.configuration(reason: "appVersion \(quotedValue(appVersion)) is not an app version (e.g. 5.2, 1.4.0, 1.0.0.123)")
            }
        }
        for name in models ?? [] {
            do { _ = try ModelName(name) } catch { throw ClientError.configuration(reason: "models names \(quotedValue(name)), which is not a model name") }
        }
        for name in downloadPolicies.keys.sorted() {
            do { _ = try ModelName(name) } catch {
                throw ClientError.configuration(reason: "downloadPolicies names \(quotedValue(name)), which is not a model name")
            }
        }
        guard keepPreviousVersions >= 0, retries >= 0, maxManifestBytes > 0, requestTimeout > 0 else {
            throw ClientError.configuration(reason: "keepPreviousVersions and retries must not be negative, maxManifestBytes and requestTimeout must be positive")
        }
        guard minimumTransferRate >= 0, transferRateWindow > 0, metadataDeadline > 0, (maxInstallBytes ?? 1) > 0 else {
            throw ClientError.configuration(reason: "minimumTransferRate must not be negative; transferRateWindow, metadataDeadline and maxInstallBytes must be positive")
        }
        if let storageBudget, storageBudget < 0 {
            throw ClientError.configuration(reason: "storageBudget \(storageBudget) must not be negative")
        }
        guard directoryLockTimeout >= 0, directoryLockTimeout.isFinite else {
            throw ClientError.configuration(reason: "directoryLockTimeout \(directoryLockTimeout) must be a number of seconds, 0 or more")
        }
        try backgroundDownloads?.validate()
        _ = try shippedKeySet()
    }

    /// `trustedKeySet`, parsed; nil when none is configured. Refuses one that is no key set
    /// (naming the rule it breaks) and one configured beside `publicKeys`.
    func shippedKeySet() throws -> KeySet? {
        guard let trustedKeySet else { return nil }
        guard publicKeys.isEmpty else {
            throw ClientError.configuration(reason: "trustedKeySet and publicKeys are both set: a key set names the manifest keys itself")
        }
        do { return try KeySet(parsing: trustedKeySet) } catch {
            throw ClientError.configuration(reason: "trustedKeySet is not a key set: \(error)")
        }
    }

    /// The newest key set this client trusts before a walk, nil when the app ships none: the
    /// one `state` keeps (verified from the app's earlier), or the app's when it is newer (a
    /// newer app may ship a newer one). A kept document that no longer parses is passed over
    /// (`try?`): the app's is trusted as given, and the walk verifies the rest again.
    func newestTrustedKeySet(_ state: ClientState) throws -> KeySet? {
        guard let shipped = try shippedKeySet() else { return nil }
        let stored = state.keySet.flatMap { Data(base64Encoded: $0.document) }.flatMap { try? KeySet(parsing: $0) }
        return stored.map { $0.version > shipped.version ? $0 : shipped } ?? shipped
    }
}
