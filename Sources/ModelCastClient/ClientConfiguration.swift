import Foundation
import ModelCastFormat

/// How a `ModelUpdater` finds, trusts and keeps models.
public struct ClientConfiguration: Sendable {
    /// The channel's manifest: `https://cdn.example.com/models/manifest.json` for stable,
    /// `…/channels/beta/manifest.json` for beta (`manifestURL(base:channel:)`).
    public var manifestURL: URL
    /// Where the client keeps its state, downloads and installed models (Application
    /// Support on iOS and macOS). Nothing outside it is ever written or deleted.
    public var directory: URL
    /// A stable id of this device for staged rollouts (a random UUID kept from the first
    /// launch is enough). It never leaves the device.
    public var deviceID: String
    /// Trusted minisign public keys (the `.pub` file's text or its base64 line). More than
    /// one during a key rotation. With any key, an unsigned manifest is refused.
    public var publicKeys: [String]
    /// The app's version, for `min_app_version`; nil skips that gate.
    public var appVersion: String?
    /// Install only these models of the manifest (nil: every model).
    public var models: Set<String>?
    /// Versions kept besides the current one, per model, for an instant local rollback.
    public var keepPreviousVersions: Int
    /// Largest manifest read; a larger one is refused without being read further.
    public var maxManifestBytes: Int
    /// Attempts per download after a dropped connection or a server error (each resumes).
    public var retries: Int
    /// Seconds a request may wait for data before it counts as dropped.
    public var requestTimeout: TimeInterval
    /// The clock (tests pin it): expiry and rollout schedules are judged by it.
    public var now: @Sendable () -> Date

    public init(
        manifestURL: URL, directory: URL, deviceID: String, publicKeys: [String] = [], appVersion: String? = nil,
        models: Set<String>? = nil, keepPreviousVersions: Int = 1, maxManifestBytes: Int = 4 << 20, retries: Int = 3,
        requestTimeout: TimeInterval = 30, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.manifestURL = manifestURL
        self.directory = directory
        self.deviceID = deviceID
        self.publicKeys = publicKeys
        self.appVersion = appVersion
        self.models = models
        self.keepPreviousVersions = keepPreviousVersions
        self.maxManifestBytes = maxManifestBytes
        self.retries = retries
        self.requestTimeout = requestTimeout
        self.now = now
    }

    /// The manifest URL of `channel` under a target's base URL: `manifest.json` for stable,
    /// `channels/NAME/manifest.json` for any other (the layout `modelcast publish --channel` writes).
    public static func manifestURL(base: URL, channel: String = "stable", manifestKey: String = "manifest.json") -> URL {
        channel == "stable" ? base.appendingPathComponent(manifestKey) : base.appendingPathComponent("channels").appendingPathComponent(channel).appendingPathComponent(manifestKey)
    }
}
