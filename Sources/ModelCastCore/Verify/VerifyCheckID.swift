import Foundation

/// Every check verify reports, by the identifier the text and `--json` reports show
/// (`manifest.cache-control`, `artifact.sha256`, …). The raw values are part of the
/// output contract: never change one.
package enum VerifyCheckID: String, CaseIterable, Sendable {
    case artifactCacheControl = "artifact.cache-control"
    case artifactContentEncoding = "artifact.content-encoding"
    case artifactContentLength = "artifact.content-length"
    case artifactContentType = "artifact.content-type"
    case artifactFetch = "artifact.fetch"
    case artifactRange = "artifact.range"
    case artifactRedirect = "artifact.redirect"
    case artifactSegments = "artifact.segments"
    case artifactSha256 = "artifact.sha256"
    case artifactSize = "artifact.size"
    case artifactStatus = "artifact.status"
    case artifactZip = "artifact.zip"
    case manifestCacheControl = "manifest.cache-control"
    case manifestContentEncoding = "manifest.content-encoding"
    case manifestContentType = "manifest.content-type"
    case manifestExpiry = "manifest.expiry"
    case manifestFetch = "manifest.fetch"
    case manifestFreshness = "manifest.freshness"
    case manifestHeaders = "manifest.headers"
    case manifestHistory = "manifest.history"
    case manifestInlineSignature = "manifest.inline-signature"
    case manifestOrigin = "manifest.origin"
    case manifestParse = "manifest.parse"
    case manifestRedirect = "manifest.redirect"
    case manifestRollout = "manifest.rollout"
    case manifestSequence = "manifest.sequence"
    case manifestSignature = "manifest.signature"
    case manifestSize = "manifest.size"
    case manifestStatus = "manifest.status"
    case manifestTrust = "manifest.trust"
    case manifestUrls = "manifest.urls"
    case storage = "storage"
}
