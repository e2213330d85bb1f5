package dev.modelcast.client.trust

import java.net.URI
import java.net.URISyntaxException

/**
 * When a manifest's live detached signature does not prove it, the signature its release
 * kept beside its history record may ([TargetKeys.keptSignatureKey]). The live manifest and
 * its signature are two objects no store replaces at once: a publish stopped between its
 * signature and manifest writes leaves the next release's signature beside the live manifest.
 *
 * Only where to look is decided here: the kept signature must then prove the manifest by
 * every rule the live one must meet (made by a pinned key over these very bytes, its trusted
 * comment naming this manifest's file, channel, sequence and expiry). Where it was found
 * proves nothing.
 */
object KeptSignatureLookup {
    /**
     * The sequence whose kept signature to fetch: the manifest's own, when the live signature
     * is another release's (its trusted comment, read here without being trusted, names
     * another sequence). Null for anything else (no sequence or one below 1, a signature that
     * cannot be read, a comment modelcast did not write, a signature of this very release that
     * fails): the manifest is then refused as it is.
     */
    fun sequence(manifestSequence: Long?, liveSignatureFile: String): Long? {
        if (manifestSequence == null || manifestSequence < 1) return null
        val signature = try {
            MinisignSignature.parse(liveSignatureFile)
        } catch (error: TrustError) {
            return null
        }
        val comment = TrustedComment.parse(signature.trustedComment) ?: return null
        return if (comment.sequence != manifestSequence) manifestSequence else null
    }

    /**
     * Where the release of [sequence] keeps its signature in the target [manifestUrl] is
     * served from: `…/manifests/00000007.json.minisig` for `…/manifest.json`,
     * `…/manifests/channels/beta/00000007.json.minisig` for `…/channels/beta/manifest.json`.
     * The query is kept (as for the live signature), the fragment dropped; the path is used
     * as written (percent-encoded). Null when the URL cannot be parsed, its path does not end
     * in a `.json` file, or [sequence] is below 1.
     */
    fun keptSignatureUrl(manifestUrl: String, sequence: Long): String? {
        if (sequence < 1) return null
        val uri = try {
            URI(manifestUrl)
        } catch (error: URISyntaxException) {
            return null
        }
        if (uri.isOpaque || uri.scheme == null || uri.rawAuthority == null) return null
        val (root, manifestKey) = TargetKeys.splitAtRoot(uri.rawPath ?: "") ?: return null
        val base = TargetKeys.split(manifestKey).second
        if (!base.endsWith(".json") || base.length <= ".json".length) return null
        val path = root + TargetKeys.keptSignatureKey(manifestKey, sequence)
        return uri.scheme + "://" + uri.rawAuthority + path + (uri.rawQuery?.let { "?$it" } ?: "")
    }
}
