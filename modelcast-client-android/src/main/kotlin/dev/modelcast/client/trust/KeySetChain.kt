package dev.modelcast.client.trust

import dev.modelcast.client.format.ManifestValueException

/**
 * The rules a client (and `modelcast verify`) walks a target's key sets by, as pure
 * functions: no I/O, no clock but the one passed in. The Swift client's `KeySetChain`.
 *
 * A client starts from a key set it trusts (the one the app ships, or the newest it verified
 * before), fetches `keys/(N+1).json` and its `.sigs` until there is none (HTTP 404), and
 * steps once per version with [step], at most [MAX_VERSIONS_PER_CHECK] per check. The newest
 * key set reached must not be expired ([KeySet.checkFresh]); one a newer version replaced
 * may be, as it is no longer relied on.
 */
object KeySetChain {
    /**
     * The most key set versions a client walks in one check. A longer chain is walked this
     * many versions per check: the verified prefix is kept, and the next check continues
     * from it, so each check's work stays bounded.
     */
    const val MAX_VERSIONS_PER_CHECK = 32

    /**
     * The next key set, when [nextBytes] (the document as served) is a valid key set whose
     * version is `trusted.version + 1` and which at least `trusted.root.threshold` distinct
     * root keys of [trusted] and at least its own `root.threshold` distinct root keys signed
     * (checked in that order). A counted signature is a prehashed minisign signature over
     * exactly [nextBytes] whose trusted comment binds the next document
     * ([KeySetComment.mismatch]); legacy `Ed` signatures never count. One signature can count
     * for both sets (a root key both list).
     *
     * Expiry is not checked here: an intermediate key set may have expired since a newer one
     * replaced it; check the newest with [KeySet.checkFresh].
     *
     * @throws KeySetError.InvalidDocument, [KeySetError.VersionGap], [KeySetError.ThresholdNotMet]
     *   (role [KeySetRoleName.ROOT], naming whose threshold failed).
     */
    @JvmStatic
    fun step(trusted: KeySet, nextBytes: ByteArray, nextSignatures: List<MinisignSignature>): KeySet {
        val expected = trusted.version + 1
        val path = KeySet.path(expected)
        val next = try {
            KeySet.parse(nextBytes)
        } catch (error: ManifestValueException) {
            throw KeySetError.InvalidDocument(path, error)
        }
        if (next.version != expected) throw KeySetError.VersionGap(path, trusted.version, next.version)
        for (signer in listOf(trusted, next)) {
            val count = KeySetThreshold(signer.root).count(nextSignatures, nextBytes, path, allowLegacy = false) {
                KeySetComment.mismatch(it.trustedComment, next)
            }
            if (count.signers.size < signer.root.threshold) {
                throw KeySetError.ThresholdNotMet(path, KeySetRoleName.ROOT, signer.version, signer.root.threshold,
                    count.signers.map { it.keyId }, count.problems)
            }
        }
        return next
    }

    /**
     * The manifest sequence floor a client sets on moving from [previous] to [next] (two
     * consecutive trusted key sets), or null when it keeps the floor it has.
     *
     * The floor is reset exactly when [next]'s manifest keys lack a key [previous] listed (a
     * key rotated out or revoked): a key that may have leaked may also have signed a manifest
     * with a huge sequence (a fast-forward attack) that raised the floor; the new floor is
     * [next]'s floor for the client's [channel] (0 when it names none), which `keys rotate`
     * sets to that channel's genuine live sequence, so older manifests still cannot be
     * replayed. Each channel has its own sequence and so its own floor. Adding a key,
     * changing thresholds or root keys resets nothing.
     */
    @JvmStatic
    fun sequenceFloor(previous: KeySet, next: KeySet, channel: String): Long? =
        if (resetsSequenceFloors(previous, next)) next.sequenceFloor(channel) else null

    /** Whether moving from [previous] to [next] resets every channel's floor: exactly when [next]'s manifest keys lack a key [previous] listed. */
    @JvmStatic
    fun resetsSequenceFloors(previous: KeySet, next: KeySet): Boolean = previous.manifest.keys.any { it !in next.manifest }
}
