package dev.modelcast.client.trust

import dev.modelcast.client.ClientError
import dev.modelcast.client.quoted
import java.net.URI
import java.net.URISyntaxException

/**
 * How a device proves a manifest with its pinned minisign keys (the Swift client's
 * `ManifestFetcher.proven`, `verify`, `bind` and `keptSignatureProof`), reporting every
 * refusal as [ClientError.BadSignature] (or [ClientError.Unsigned]) naming the manifest URL.
 * Fetching and decoding stay with the caller ([prove] takes them as functions), so these
 * rules are tested without a server.
 */
object ManifestSignatureCheck {
    /** The largest signature file a device reads: a minisign signature is a few hundred bytes. */
    const val MAX_SIGNATURE_BYTES = 16 shl 10

    /** What the signature binds of a decoded manifest: its `sequence` and `expires_at`. */
    class ManifestFacts(val sequence: Long?, val expiresAt: String?)

    /** A manifest proven (or taken as it is, when no key is pinned): the decoded [release] and the signed [comment]. */
    class Proven<R>(val release: R, val comment: TrustedComment?)

    /**
     * The configured keys (`.pub` file text or the bare base64 line each), parsed. A key that
     * is no minisign public key is named by its position and first 60 characters, as
     * [ClientError.BadSignature] for [manifestUrl] (the Swift client's choice: the manifest
     * cannot be proven).
     */
    fun pinnedKeys(configured: List<String>, manifestUrl: String): List<MinisignPublicKey> =
        configured.mapIndexed { index, text ->
            val shown = text.take(60).replace('\n', ' ')
            try {
                MinisignPublicKey.parse(text, "configured public key ${index + 1} ('$shown')")
            } catch (error: TrustError) {
                throw badSignature(manifestUrl, error.message ?: "", error)
            }
        }

    /**
     * The trusted comment of [signatureFile], a minisign signature over [message] by one of
     * [keys] (legacy signatures refused), when that comment is modelcast's. Errors name the
     * signature as [source], or as [fileSource] when the file cannot be parsed; each is a
     * [ClientError.BadSignature] for [manifestUrl] whose cause is the [TrustError].
     */
    fun verify(
        signatureFile: String,
        message: ByteArray,
        keys: List<MinisignPublicKey>,
        manifestUrl: String,
        source: String = manifestUrl,
        fileSource: String = "$manifestUrl.minisig"
    ): TrustedComment {
        val verified = try {
            MinisignSignature.parse(signatureFile, fileSource).verify(message, keys, source, allowLegacy = false)
        } catch (error: TrustError) {
            throw badSignature(manifestUrl, error.message ?: "", error)
        }
        return TrustedComment.parse(verified.trustedComment)
            ?: throw ClientError.BadSignature(manifestUrl,
                "the trusted comment is not modelcast's (it binds no sequence): ${quoted(verified.trustedComment)}")
    }

    /**
     * Refuses a signed comment that does not name this manifest: its [sequence] and
     * [expiresAt] (the manifest's), and its file, which names [channel], so a signature moved
     * to another channel's URL is refused even by a client that does not read the manifest's
     * channel field. The manifest's name is the last path segment of [manifestUrl].
     */
    fun bind(comment: TrustedComment, sequence: Long?, expiresAt: String?, channel: String, manifestUrl: String) {
        val problem = comment.problems(sequence, expiresAt, channel, manifestName(manifestUrl)).firstOrNull() ?: return
        throw ClientError.BadSignature(manifestUrl, problem.reason)
    }

    /** Where a manifest's detached signature is: its URL with `.minisig` added to the path (the query kept). */
    fun signatureUrl(manifestUrl: String): String {
        val uri = try {
            URI(manifestUrl)
        } catch (error: URISyntaxException) {
            return "$manifestUrl.minisig"
        }
        if (uri.isOpaque || uri.rawAuthority == null) return "$manifestUrl.minisig"
        return uri.scheme + "://" + uri.rawAuthority + (uri.rawPath ?: "") + ".minisig" + (uri.rawQuery?.let { "?$it" } ?: "")
    }

    /**
     * Proves [data], the manifest fetched from [manifestUrl] for [channel], as the Swift
     * client does. Without [keys] it is taken as it is (less any inline signature). Else:
     * its inline signature when it has one; else its detached signature ([fetchSignature] of
     * [signatureUrl], null for HTTP 404: [ClientError.Unsigned]); and when that one is another
     * release's, the signature kept for the sequence the manifest claims
     * ([KeptSignatureLookup]), which must prove these very bytes by every rule. [decode]
     * parses manifest bytes (throwing its own errors), [facts] reads what the signature binds.
     */
    fun <R> prove(
        data: ByteArray,
        manifestUrl: String,
        channel: String,
        keys: List<MinisignPublicKey>,
        decode: (ByteArray) -> R,
        facts: (R) -> ManifestFacts,
        fetchSignature: (String) -> String?
    ): Proven<R> {
        if (keys.isEmpty()) return Proven(decode(InlineSignature.strip(data)), null)
        val inline = InlineSignature.split(data)
        if (inline != null) {
            val file = try {
                InlineSignature.signatureFile(inline.member)
            } catch (error: TrustError) {
                throw badSignature(manifestUrl, error.message ?: "", error)
            }
            val comment = verify(file, inline.signed, keys, manifestUrl)
            val release = decode(inline.signed)
            bind(comment, facts(release), channel, manifestUrl)
            return Proven(release, comment)
        }
        val file = fetchSignature(signatureUrl(manifestUrl)) ?: throw ClientError.Unsigned(manifestUrl)
        return try {
            val comment = verify(file, data, keys, manifestUrl)
            val release = decode(data)
            bind(comment, facts(release), channel, manifestUrl)
            Proven(release, comment)
        } catch (liveFailure: ClientError.BadSignature) {
            keptSignatureProof(data, manifestUrl, channel, keys, file, liveFailure, decode, facts, fetchSignature)
        }
    }

    /**
     * The proof by the kept signature when the live one ([liveFile], which failed with
     * [liveFailure]) is another release's; else the live failure, with why the kept one did
     * not help when one was looked for.
     */
    private fun <R> keptSignatureProof(
        data: ByteArray,
        manifestUrl: String,
        channel: String,
        keys: List<MinisignPublicKey>,
        liveFile: String,
        liveFailure: ClientError.BadSignature,
        decode: (ByteArray) -> R,
        facts: (R) -> ManifestFacts,
        fetchSignature: (String) -> String?
    ): Proven<R> {
        fun refused(why: String? = null) =
            ClientError.BadSignature(manifestUrl, liveFailure.reason + (why?.let { "; $it" } ?: "")).apply { initCause(liveFailure) }
        // Read before any signature proves it, only to learn which kept signature to fetch:
        // that signature must then prove these bytes and this very sequence.
        val claimed = try {
            decode(data)
        } catch (error: Exception) {
            throw refused()
        }
        val sequence = KeptSignatureLookup.sequence(facts(claimed).sequence, liveFile) ?: throw refused()
        val keptUrl = KeptSignatureLookup.keptSignatureUrl(manifestUrl, sequence)
            ?: throw refused("no kept signature was looked for: the manifest URL's path does not end in a .json file, " +
                "so it is not laid out as modelcast writes a target")
        val kept = "the signature kept for sequence $sequence, $keptUrl,"
        val file = try {
            fetchSignature(keptUrl)
        } catch (error: ClientError) {
            throw refused("$kept could not be read: ${error.message}")
        } ?: throw refused("$kept is not there (HTTP 404)")
        return try {
            val comment = verify(file, data, keys, manifestUrl, source = keptUrl, fileSource = keptUrl)
            bind(comment, facts(claimed), channel, manifestUrl)
            Proven(claimed, comment)
        } catch (error: ClientError.BadSignature) {
            throw refused("$kept does not prove it either: ${error.reason}")
        }
    }

    private fun bind(comment: TrustedComment, facts: ManifestFacts, channel: String, manifestUrl: String) =
        bind(comment, facts.sequence, facts.expiresAt, channel, manifestUrl)

    /** The last path segment of [manifestUrl], percent-decoded (Foundation's `lastPathComponent`). */
    internal fun manifestName(manifestUrl: String): String {
        val path = try {
            URI(manifestUrl).path
        } catch (error: URISyntaxException) {
            null
        } ?: manifestUrl
        return path.trimEnd('/').substringAfterLast('/')
    }

    private fun badSignature(url: String, reason: String, cause: Throwable) =
        ClientError.BadSignature(url, reason).apply { initCause(cause) }
}
