import Foundation
import ModelCastFormat

/// How `verify` behaves.
package struct VerifyOptions: Sendable {
    /// Read the manifest as this profile instead of detecting it.
    package var profile: ManifestProfile?
    /// Accept http:// URLs (local testing only: iOS refuses them).
    package var allowHTTP = false
    /// URL prefixes objects must live under; empty means the manifest's own directory (for
    /// a channel's manifest, `…/channels/NAME/manifest.json`, the directory above `channels/`).
    package var expectedPrefixes: [String] = []
    /// Accept object URLs outside the expected prefixes.
    package var allowExternalURLs = false
    /// Deadline for the whole run, in seconds.
    package var timeout: TimeInterval = 600
    /// Deadline for the manifest and each small request, in seconds.
    package var requestTimeout: TimeInterval = 30
    /// Slowest acceptable download speed (bytes/s): an artifact's deadline is
    /// `requestTimeout + size / minimumSpeed`, so a dripping server fails.
    package var minimumSpeed: Double = 256 * 1024
    /// Retries for HTTP 5xx answers and failed connections (refused, reset, dropped
    /// mid-body, silent past the idle timeout). A request that reaches its deadline is not retried.
    package var retries = 3
    /// Downloads in flight at once.
    package var jobs = 4
    /// A file recording the highest sequence seen per manifest (replay defence).
    package var statePath: String?
    /// Treat warnings as failures.
    package var strict = false
    /// Largest manifest read before parsing (what a device reads).
    package var maxManifestBytes = ManifestLimits.maxBytes
    /// A zip artifact with more entries is refused (from its end record, before the central directory is read).
    package var maxZipEntries = ZipInspector.defaultMaxEntries
    /// How much of an artifact's segment index is proven (`--segments`).
    package var segments = SegmentCheck.sample
    /// Warn when the manifest expires sooner than this (seconds).
    package var expiryWarning: TimeInterval = 7 * 24 * 3600
    /// Trusted signing keys: the manifest must carry a good signature by one of them.
    package var publicKeys: [MinisignPublicKey] = []
    /// Fail an unsigned manifest even without keys to check it against.
    package var requireSignature = false
    /// The P-256 public key model signatures must verify with (`--model-signing-public-key`);
    /// nil: each bundle is fetched and reported present, its signature and files unchecked.
    package var modelSigningPublicKey: P256PublicKey?
    /// Accept a legacy (`Ed`, not prehashed) minisign signature; modelcast writes only `ED`.
    package var allowLegacySignature = false
    /// The target a published directory is (`verify DIR`): its history says which
    /// sequence went live last, and the live manifest must not be older.
    package var historyStorage: (any Storage)?
    /// `historyStorage`'s state as already read (`verify s3://` reads it to find the base
    /// URL), so it is not listed and read again; nil: read when needed.
    package var historyState: TargetState?
    /// The manifest's key in `historyStorage`.
    package var historyManifestKey = "manifest.json"
    /// The target a CDN serves from (`verify URL --origin TARGET`): the manifest the URL
    /// serves must be the bytes of the origin's live manifest (`originManifestKey`).
    package var origin: (any Storage)?
    /// The origin's manifest key; nil: the file name of the manifest URL.
    package var originManifestKey: String?
    /// The current time (tests pin it).
    package var now = Date()
    /// Reports download progress; nil reports nothing.
    package var progress: ProgressFactory?

    package init() {}
}

/// How much of an artifact's segment index verify proves. Either way the index object is
/// proven first: its bytes are the ones the manifest pins (size and SHA-256), it decodes,
/// its segments tile the artifact exactly (lengths summing to its size), and it names the
/// artifact's own size and SHA-256, which the artifact is then hashed against whole.
package enum SegmentCheck: String, Sendable, CaseIterable {
    /// Then a sample of segments (the first, the last, two between and four at random) is
    /// fetched by range, as devices fetch them, and each hashed against the index: every
    /// byte is hashed once, plus the sample.
    case sample
    /// Then every segment is hashed as the artifact streams by (a second pass over every
    /// byte), and a directory's artifact is also cut again by the index's scheme, which
    /// must give the same segments; through a URL the sample is fetched by range too.
    case all
}
