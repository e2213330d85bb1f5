import Foundation

/// How a release goes live, whatever the command (publish, rollback, resign, promote,
/// rollout): built once from the command line and embedded in each command's request,
/// so these settings are declared, documented and assigned in one place.
package struct GoLive: Sendable {
    /// A directory whose `*.mustache` files replace or extend the built-in templates.
    package let templatesDirectory: String?
    /// Compute and print everything, write nothing.
    package let dryRun: Bool
    /// The time written as `published_at`.
    package let publishedAt: Date
    /// Where `publishedAt` came from when it is not the current time (`SOURCE_DATE_EPOCH=…`), for messages.
    package let publishedAtOrigin: String?
    /// Signing key, expiry and inline signature; nil keeps the manifest unsigned.
    package let signing: SigningSettings?
    /// Replace a signed live manifest with an unsigned one (refused otherwise).
    package let allowUnsigned: Bool
    /// Accept a stored object's size where the store cannot prove its SHA-256 itself.
    package let trustStored: Bool
    /// Continue from a live manifest that no history record explains (refused otherwise).
    package let adoptLive: Bool

    package init(templatesDirectory: String? = nil, dryRun: Bool = false, publishedAt: Date = Date(), publishedAtOrigin: String? = nil,
                 signing: SigningSettings? = nil, allowUnsigned: Bool = false, trustStored: Bool = false, adoptLive: Bool = false) {
        self.templatesDirectory = templatesDirectory
        self.dryRun = dryRun
        self.publishedAt = publishedAt
        self.publishedAtOrigin = publishedAtOrigin
        self.signing = signing
        self.allowUnsigned = allowUnsigned
        self.trustStored = trustStored
        self.adoptLive = adoptLive
    }
}
