package dev.modelcast.client

import dev.modelcast.client.format.Release
import dev.modelcast.client.format.Timestamp
import dev.modelcast.client.net.Cancellation
import dev.modelcast.client.net.HttpRequest
import dev.modelcast.client.net.HttpStream
import dev.modelcast.client.net.SmallObject
import dev.modelcast.client.trust.KeySet
import dev.modelcast.client.trust.ManifestSignatureCheck
import java.time.Instant

/**
 * A manifest fetched and proven: signed by a trusted key (when keys are configured), its
 * signed comment matching it, of this channel, not expired.
 *
 * @property etag the manifest's ETag, for the next conditional GET.
 * @property expiresAt when it stops being fresh: the earlier of its `expires_at` and its
 *   signature's, as the manifest spells it; null when it never does.
 */
internal class CheckedManifest(val release: Release, val etag: String?, val expiresAt: String?)

/**
 * Fetches the manifest the way a careful device does: bounded (the configured size, the
 * metadata deadline, the minimum rate), proven by the pinned keys ([ManifestSignatureCheck]:
 * the inline signature, else `manifest.json.minisig`, else the signature kept for the
 * sequence it claims) or, under a key set, by its manifest threshold ([ManifestThresholdCheck]),
 * then held to the channel followed and to its expiry.
 */
internal class ManifestFetcher(
    private val configuration: ClientConfiguration,
    private val http: HttpStream,
    /** The key set the manifest is proven by (its manifest keys and threshold) instead of the pinned keys; null without one. */
    private val keySet: KeySet? = null
) {
    private val url = configuration.manifestUrl

    /**
     * The proven manifest, or null when the server answers 304 (unchanged since [etag]): the
     * caller judges that, as only a manifest it trusts and asked about can be unchanged.
     */
    fun fetch(etag: String?, cancellation: Cancellation?): CheckedManifest? {
        val headers = if (etag != null) mapOf("If-None-Match" to etag) else emptyMap()
        val answer = http.small(HttpRequest(url, headers), SmallObject.MANIFEST, configuration.maxManifestBytes.toLong(), cancellation)
        val status = answer.response.status
        if (status == 304) return null
        if (status != 200) throw ClientError.Http(url, status)
        val proven = if (keySet != null) ManifestThresholdCheck(configuration, http).prove(answer.body, keySet, cancellation)
            else provenByPinnedKeys(answer.body, cancellation)
        val release = proven.release
        if (release.channel.text != configuration.channel) throw ClientError.WrongChannel(url, configuration.channel, release.channel.text)
        // Both expiries hold: the manifest's, and the one its signature carries (a manifest
        // without `expires_at` may be given one by its signature alone).
        var earliest: Pair<Instant, String>? = null
        for (expiresAt in listOfNotNull(release.expiresAt?.text, proven.comment?.expiresAt)) {
            val expiry = checkFresh(expiresAt)
            if (earliest == null || expiry < earliest.first) earliest = Pair(expiry, expiresAt)
        }
        return CheckedManifest(release, answer.response.header("ETag"), earliest?.second)
    }

    /** The manifest proven by the pinned keys ([ManifestSignatureCheck.prove]), or taken as it is without keys. */
    private fun provenByPinnedKeys(data: ByteArray, cancellation: Cancellation?): ManifestSignatureCheck.Proven<Release> {
        val keys = ManifestSignatureCheck.pinnedKeys(configuration.publicKeys, url)
        return ManifestSignatureCheck.prove(data, url, configuration.channel, keys,
            decode = { bytes -> Release.decode(bytes, url) },
            facts = { release -> ManifestSignatureCheck.ManifestFacts(release.sequence, release.expiresAt?.text) },
            fetchSignature = { signatureUrl -> signatureFile(signatureUrl, cancellation) })
    }

    /** Refuses a manifest whose expiry [expiresAt] has passed by the configured clock ([ClientError.Expired], naming it and the time now); returns the expiry. */
    fun checkFresh(expiresAt: String): Instant {
        val expiry = Timestamp.parse(expiresAt) ?: throw ClientError.InvalidManifest(url, "expires_at", expiresAt, "is not an RFC 3339 time")
        val now = configuration.clock()
        if (!expiry.isAfter(now)) throw ClientError.Expired(url, expiresAt, Timestamp.format(now))
        return expiry
    }

    /** True while [expiresAt] has not passed (an unreadable one counts as passed). */
    fun isFresh(expiresAt: String): Boolean = try {
        checkFresh(expiresAt)
        true
    } catch (error: ClientError) {
        false
    }

    /**
     * A detached signature's text, fetched with a metadata request's bounds (at most 16 KiB,
     * the idle timeout, the minimum rate and the metadata deadline); null when the server has
     * none (404).
     */
    private fun signatureFile(signatureUrl: String, cancellation: Cancellation?): String? {
        val answer = http.small(HttpRequest(signatureUrl), SmallObject.SIGNATURE, ManifestSignatureCheck.MAX_SIGNATURE_BYTES.toLong(), cancellation)
        val status = answer.response.status
        if (status == 404) return null
        if (status != 200) throw ClientError.Http(signatureUrl, status)
        // Malformed UTF-8 becomes U+FFFD: the signature's own parser then refuses it by name.
        return String(answer.body, Charsets.UTF_8)
    }
}
