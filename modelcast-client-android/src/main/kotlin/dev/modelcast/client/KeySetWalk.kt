package dev.modelcast.client

import dev.modelcast.client.net.Cancellation
import dev.modelcast.client.net.HttpRequest
import dev.modelcast.client.net.HttpStream
import dev.modelcast.client.net.SmallObject
import dev.modelcast.client.trust.KeySet
import dev.modelcast.client.trust.KeySetChain
import dev.modelcast.client.trust.MinisignSignatureList

/**
 * What one check's walk of the key set chain reached.
 *
 * @property newest the newest key set verified (the start when no newer one was found).
 * @property newestBytes [newest]'s document bytes when it is newer than the start (to keep in the state).
 * @property floorReset the key set whose `sequence_floors` replace the client's floors when a
 *   step rotated a manifest key out ([KeySetChain.resetsSequenceFloors], the last such step's);
 *   null: keep the floors.
 * @property failure why the walk stopped before the end of the chain; the verified prefix still counts.
 */
internal class KeySetWalkResult(val newest: KeySet, val newestBytes: ByteArray?, val floorReset: KeySet?, val failure: ClientError?)

/**
 * Walks a target's key sets from one the client trusts: `keys/(N+1).json` and its `.sigs`,
 * one version at a time, until the server has none (404 or 403, [isMissing]), at most
 * [KeySetChain.MAX_VERSIONS_PER_CHECK] versions per check. Each document and list is read
 * with a metadata request's bounds ([KeySet.MAX_BYTES], [MinisignSignatureList.MAX_BYTES],
 * the metadata deadline), so a hostile server costs a check bounded work. The Swift
 * client's `KeySetWalk`.
 */
internal class KeySetWalk(private val configuration: ClientConfiguration, private val http: HttpStream) {
    /**
     * The target's root, where `keys/` is (ending in `/`): the manifest URL's folder, above
     * `channels/NAME/` for a channel other than stable.
     */
    val targetBase: String
        get() {
            val url = configuration.manifestUrl.substringBefore('?').substringBefore('#')
            var base = url.substring(0, url.lastIndexOf('/') + 1)
            val channel = configuration.channel
            if (channel != "stable" && base.endsWith("/channels/$channel/")) base = base.removeSuffix("channels/$channel/")
            return base
        }

    /**
     * Steps from [start] as far as the chain (and the per-check bound) goes. A refused link
     * or a failed request ends the walk with [KeySetWalkResult.failure] set; what was
     * verified before it is returned, as it is trusted whatever follows.
     */
    fun walk(start: KeySet, cancellation: Cancellation?): KeySetWalkResult {
        var current = start
        var bytes: ByteArray? = null
        var floorReset: KeySet? = null
        for (step in 0 until KeySetChain.MAX_VERSIONS_PER_CHECK) {
            val version = current.version + 1
            val path = KeySet.path(version)
            val documentUrl = targetBase + path
            try {
                val document = fetch(documentUrl, SmallObject.KEY_SET, KeySet.MAX_BYTES, cancellation) ?: break
                val listBytes = fetch("$documentUrl.sigs", SmallObject.SIGNATURE_LIST, MinisignSignatureList.MAX_BYTES, cancellation)
                    ?: throw ClientError.KeySetRefused(path, version, "$path.sigs is missing (404 or 403): the root signatures are not published")
                val next = try {
                    val list = MinisignSignatureList.parse(listBytes, "$path.sigs")
                    KeySetChain.step(current, document, list.signatures)
                } catch (error: ClientError) {
                    throw error
                } catch (error: Exception) {
                    throw ClientError.KeySetRefused(path, version, error.message ?: error.toString())
                }
                if (KeySetChain.resetsSequenceFloors(current, next)) floorReset = next
                current = next
                bytes = document
            } catch (error: ClientError) {
                return KeySetWalkResult(current, bytes, floorReset, error)
            }
        }
        return KeySetWalkResult(current, bytes, floorReset, null)
    }

    /**
     * The body at [url], or null when there is none: a 404, or a 403 ([isMissing]: a private
     * S3 bucket without list permission answers 403 for a missing object, so a 404-only rule
     * would make every check on such a target fail at the end of its chain).
     */
    private fun fetch(url: String, kind: SmallObject, limit: Int, cancellation: Cancellation?): ByteArray? {
        val answer = http.small(HttpRequest(url), kind, limit.toLong(), cancellation)
        val status = answer.response.status
        if (isMissing(status)) return null
        if (status != 200) throw ClientError.Http(url, status)
        return answer.body
    }
}

/**
 * True for a status that says an optional key set file is not there: 404, or the 403 a
 * private S3 bucket without list permission answers for a missing object. Taking a 403 as
 * "none" gives an attacker nothing a 404 does not (a server may always hide a newer key set
 * until the trusted one expires, and a missing signature still counts as none toward a
 * threshold); a target that forbids everything still fails at `manifest.json`.
 */
internal fun isMissing(status: Int): Boolean = status == 404 || status == 403
