package dev.modelcast.client

import dev.modelcast.client.format.Release
import dev.modelcast.client.net.Cancellation
import dev.modelcast.client.net.HttpRequest
import dev.modelcast.client.net.HttpStream
import dev.modelcast.client.net.SmallObject
import dev.modelcast.client.trust.InlineManifestSignature
import dev.modelcast.client.trust.InlineSignature
import dev.modelcast.client.trust.KeptSignatureLookup
import dev.modelcast.client.trust.KeySet
import dev.modelcast.client.trust.KeySetError
import dev.modelcast.client.trust.ManifestSignatureCheck
import dev.modelcast.client.trust.MinisignSignature
import dev.modelcast.client.trust.MinisignSignatureList
import dev.modelcast.client.trust.TrustError
import dev.modelcast.client.trust.TrustedComment
import dev.modelcast.client.trust.verifyManifest

/**
 * A manifest proven under a key set: at least its manifest threshold of distinct manifest
 * keys signed it. The signatures are the inline member (over the manifest without it),
 * `MANIFEST.minisig` (the first key's, which `minisign -V` checks) and `MANIFEST.sigs` (every
 * signer's), both over the bytes as served; either file may be missing (404, or the 403 of a
 * private bucket: [isMissing]; a one-signer target writes no `.sigs`). A signature by a key
 * the set no longer lists (a revoked one) does not count.
 *
 * A publish writes `.minisig` and `.sigs` just before the manifest; stopped between them, it
 * leaves the next release's signatures beside the live manifest. As with pinned keys
 * ([ManifestSignatureCheck.prove]), the signatures the live manifest's release kept beside
 * its history record (`manifests/N.json.minisig`, `manifests/N.json.sigs`) are then read, and
 * must meet the same threshold over the same bytes with comments that bind this very
 * manifest; nothing else is weaker. The Swift client's `ManifestFetcher.provenByThreshold`.
 */
internal class ManifestThresholdCheck(private val configuration: ClientConfiguration, private val http: HttpStream) {
    private val url = configuration.manifestUrl

    /** Signatures found at two URLs, with the two answers' statuses (for the message when there are none). */
    private class Found(val signatures: List<MinisignSignature>, val statuses: List<Int>)

    /**
     * The release of [data] (the manifest as served) and the counted comment with the
     * earliest expiry; [ClientError.Unsigned] without any signature,
     * [ClientError.BadSignature] for one that cannot be read, else
     * [ClientError.ManifestThresholdNotMet] naming why the live signatures, and the kept ones
     * when they were looked for, fall short.
     */
    fun prove(data: ByteArray, keySet: KeySet, cancellation: Cancellation?): ManifestSignatureCheck.Proven<Release> {
        val inline = try {
            InlineSignature.split(data)?.let { split ->
                InlineManifestSignature(split.signed, MinisignSignature.parse(InlineSignature.signatureFile(split.member), url))
            }
        } catch (error: TrustError) {
            throw ClientError.BadSignature(url, error.message ?: error.toString()).apply { initCause(error) }
        }
        val minisigUrl = ManifestSignatureCheck.signatureUrl(url)
        val live = signatures(minisigUrl, listUrl(minisigUrl), cancellation)
        if (inline == null && live.signatures.isEmpty()) throw ClientError.Unsigned(url)
        val release = Release.decode(inline?.bytes ?: data, url)
        val liveFailure = try {
            return threshold(keySet, data, inline, live.signatures, release)
        } catch (error: KeySetError) {
            error
        }
        fun refused(why: String? = null) = ClientError.ManifestThresholdNotMet(url, keySet.version,
            (liveFailure.message ?: liveFailure.toString()) + (why?.let { "; $it" } ?: "")).apply { initCause(liveFailure) }
        // Read before any signature proves it, only to learn which kept signatures to fetch
        // ([KeptSignatureLookup]): the first live signature names another sequence.
        val first = live.signatures.firstOrNull() ?: throw refused()
        val sequence = KeptSignatureLookup.sequence(release.sequence, first.fileContents) ?: throw refused()
        val keptUrl = KeptSignatureLookup.keptSignatureUrl(url, sequence)
            ?: throw refused("no kept signature was looked for: the manifest URL's path does not end in a .json file, " +
                "so it is not laid out as modelcast writes a target")
        val kept = "the signatures kept for sequence $sequence, $keptUrl and .sigs,"
        val found = try {
            signatures(keptUrl, listUrl(keptUrl), cancellation)
        } catch (error: ClientError) {
            throw refused("$kept could not be read: ${error.message}")
        }
        if (found.signatures.isEmpty()) throw refused("$kept are not there (HTTP ${found.statuses.joinToString(", ")})")
        return try {
            threshold(keySet, data, inline, found.signatures, release)
        } catch (error: KeySetError) {
            throw refused("$kept do not prove it either: ${error.message}")
        }
    }

    /** The release with the counted comment of the earliest expiry, when [signatures] (over [data]) and [inline] meet [keySet]'s manifest threshold; else [KeySetError]. */
    private fun threshold(
        keySet: KeySet,
        data: ByteArray,
        inline: InlineManifestSignature?,
        signatures: List<MinisignSignature>,
        release: Release
    ): ManifestSignatureCheck.Proven<Release> {
        val file = TrustedComment.fileField(configuration.channel, ManifestSignatureCheck.manifestName(url))
        val proof = keySet.verifyManifest(data, signatures, file, release.sequence, release.expiresAt?.text, inline = inline)
        val earliest = proof.earliestExpiry
        return ManifestSignatureCheck.Proven(release, proof.comments.firstOrNull { it.expiresAt == earliest } ?: proof.comments.firstOrNull())
    }

    /**
     * The signature at [minisigUrl] and those of the list at [listUrl], each absent when the
     * server has none ([isMissing]); another status than 200 is [ClientError.Http], a file
     * that cannot be read [ClientError.BadSignature]. Each is read with a metadata request's
     * bounds and its own size limit.
     */
    private fun signatures(minisigUrl: String, listUrl: String, cancellation: Cancellation?): Found {
        val single = optional(minisigUrl, SmallObject.SIGNATURE, ManifestSignatureCheck.MAX_SIGNATURE_BYTES, cancellation)
        val several = optional(listUrl, SmallObject.SIGNATURE_LIST, MinisignSignatureList.MAX_BYTES, cancellation)
        val found = ArrayList<MinisignSignature>()
        try {
            // Malformed UTF-8 becomes U+FFFD: the signature's own parser then refuses it by name.
            single.first?.let { found.add(MinisignSignature.parse(String(it, Charsets.UTF_8), minisigUrl)) }
            several.first?.let { found.addAll(MinisignSignatureList.parse(it, listUrl).signatures) }
        } catch (error: TrustError) {
            throw ClientError.BadSignature(url, error.message ?: error.toString()).apply { initCause(error) }
        }
        return Found(found, listOf(single.second, several.second))
    }

    /** The body at [objectUrl] (null when it is not there) and the status that said so. */
    private fun optional(objectUrl: String, kind: SmallObject, limit: Int, cancellation: Cancellation?): Pair<ByteArray?, Int> {
        val answer = http.small(HttpRequest(objectUrl), kind, limit.toLong(), cancellation)
        val status = answer.response.status
        if (isMissing(status)) return Pair(null, status)
        if (status != 200) throw ClientError.Http(objectUrl, status)
        return Pair(answer.body, status)
    }

    /** `NAME.sigs` beside `NAME.minisig` ([minisigUrl]): the query kept, as for `.minisig`. */
    private fun listUrl(minisigUrl: String): String {
        // A path holds no '?': the first one starts the query.
        val query = minisigUrl.indexOf('?').let { if (it < 0) minisigUrl.length else it }
        return minisigUrl.substring(0, query).removeSuffix(".minisig") + ".sigs" + minisigUrl.substring(query)
    }
}
