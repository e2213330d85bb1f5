package dev.modelcast.client.trust

import dev.modelcast.client.format.Timestamp
import dev.modelcast.client.quoted

/**
 * What a manifest's threshold check established: the distinct manifest keys whose
 * signatures counted ([signers], in the order of the signatures, at least the key set's
 * manifest threshold of them), with each one's trusted comment ([comments]`[i]` is
 * [signers]`[i]`'s).
 */
class ManifestThresholdProof(val signers: List<VerifiedSignature>, val comments: List<TrustedComment>) {
    /**
     * The earliest expiry a counted comment signs (RFC 3339 as written), or null when none
     * expires. A manifest without `expires_at` may carry its expiry only here.
     */
    val earliestExpiry: String?
        get() = comments.mapNotNull { it.expiresAt }.sortedBy { Timestamp.parse(it) ?: java.time.Instant.MIN }.firstOrNull()
}

/**
 * Proves a manifest under this key set: at least `manifest.threshold` distinct manifest keys
 * made a valid prehashed signature over exactly [bytes], each with a trusted comment that
 * binds the manifest as a single-key check does ([TrustedComment.parse] reads it; its
 * `sequence` and, when the manifest has one, `expires` equal the manifest's [sequence] and
 * [expiresAt]; its `file` is [file], the channel's manifest as [TrustedComment.fileField]
 * names it). [signatures] are `MANIFEST.minisig` and the entries of `MANIFEST.sigs`, in any
 * order; repeats count once, and a signature that does not count fails nothing once the
 * threshold is met. A key the key set no longer lists (a revoked one) does not count.
 *
 * A manifest that carries its signature inside ([InlineSignature]) gives it as [inline]:
 * that member signs the manifest without it ([InlineManifestSignature.bytes]), while
 * `MANIFEST.minisig` and `MANIFEST.sigs` sign the bytes as served ([bytes]), which is what
 * `minisign -V` checks and what `publish --inline-signature --sign K1 --sign K2` writes.
 * Both count, each key once.
 *
 * @throws KeySetError.ThresholdNotMet (role [KeySetRoleName.MANIFEST]) naming who signed and
 *   why the others did not count. [allowLegacy] accepts `Ed` (unprehashed) signatures, as
 *   `verify --allow-legacy-signature` does; a device leaves it false.
 */
fun KeySet.verifyManifest(
    bytes: ByteArray,
    signatures: List<MinisignSignature>,
    file: String,
    sequence: Long?,
    expiresAt: String?,
    allowLegacy: Boolean = false,
    inline: InlineManifestSignature? = null
): ManifestThresholdProof {
    val comments = HashMap<MinisignKeyId, TrustedComment>()
    val bind: (VerifiedSignature) -> String? = { verified -> bindManifest(verified, file, sequence, expiresAt, comments) }
    val threshold = KeySetThreshold(manifest)
    val none = KeySetThreshold.Count(emptyList(), emptyList())
    val counted = if (inline != null) threshold.count(listOf(inline.signature), inline.bytes, file, allowLegacy, none, bind) else none
    val count = threshold.count(signatures, bytes, file, allowLegacy, counted, bind)
    if (count.signers.size < manifest.threshold) {
        throw KeySetError.ThresholdNotMet(file, KeySetRoleName.MANIFEST, version, manifest.threshold, count.signers.map { it.keyId }, count.problems)
    }
    return ManifestThresholdProof(count.signers, count.signers.map { comments.getValue(it.keyId) })
}

/**
 * A manifest's inline signature ([InlineSignature]) with what it signs: [bytes], the
 * manifest without its `signature` member.
 */
class InlineManifestSignature(val bytes: ByteArray, val signature: MinisignSignature)

/**
 * Null when [verified]'s trusted comment binds the manifest (then kept in [comments], the
 * first one per key), else why not.
 */
private fun bindManifest(
    verified: VerifiedSignature,
    file: String,
    sequence: Long?,
    expiresAt: String?,
    comments: MutableMap<MinisignKeyId, TrustedComment>
): String? {
    val comment = TrustedComment.parse(verified.trustedComment)
        ?: return "the trusted comment is not modelcast's (it binds no sequence): ${quoted(verified.trustedComment)}"
    // The single-key check's sequence and expiry rules; the file is compared with [file] as
    // given (the caller names the channel's manifest), so the channel passed here is unused.
    val problem = comment.problems(sequence, expiresAt, TargetKeys.STABLE_CHANNEL, "").firstOrNull { it.field != BindingProblem.Field.FILE }
    return when {
        problem != null -> problem.reason
        comment.file != file -> "the signature is for ${quoted(comment.file)}, not $file"
        else -> { comments.getOrPut(verified.keyId) { comment }; null }
    }
}
