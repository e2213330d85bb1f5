package dev.modelcast.client.trust

/**
 * Counts the distinct keys of one role whose signatures over a message verify and whose
 * trusted comments pass `bind`: the one rule behind a key set link and a threshold
 * manifest. A signature by a key the role does not list, one that does not verify (a
 * legacy `Ed` one unless allowed), one whose comment does not bind, and a second one by a
 * key already counted do not count; they are returned as problems (for the message), and
 * never fail the count by themselves: a threshold met by valid signatures is met.
 */
internal class KeySetThreshold(private val role: KeySetRole) {
    class Count(val signers: List<VerifiedSignature>, val problems: List<KeySetSignatureProblem>)

    /**
     * [counted]: what signatures over other bytes already counted (a manifest's inline
     * signature is over its bytes without it), so a key counts once across both.
     */
    fun count(
        signatures: List<MinisignSignature>,
        message: ByteArray,
        source: String,
        allowLegacy: Boolean,
        counted: Count = Count(emptyList(), emptyList()),
        bind: (VerifiedSignature) -> String?
    ): Count {
        val signers = ArrayList(counted.signers)
        val problems = ArrayList(counted.problems)
        // BLAKE2b-512 of the message once, not once per signature.
        val prehashed by lazy { Blake2b.hash(message) }
        for (signature in signatures) {
            if (role.key(signature.keyId) == null) {
                problems.add(KeySetSignatureProblem(signature.keyId, KeySetSignatureProblem.Reason.NotARoleKey))
                continue
            }
            val verified = try {
                signature.verify(message, role.keys, source, allowLegacy) { prehashed }
            } catch (error: TrustError) {
                problems.add(KeySetSignatureProblem(signature.keyId, KeySetSignatureProblem.Reason.Invalid(error)))
                continue
            }
            val mismatch = bind(verified)
            if (mismatch != null) {
                problems.add(KeySetSignatureProblem(signature.keyId, KeySetSignatureProblem.Reason.CommentMismatch(mismatch)))
                continue
            }
            // Distinct by key bytes: one secret counts once, whatever key id a signature names.
            if (signers.any { it.publicKey.key.contentEquals(verified.publicKey.key) }) {
                problems.add(KeySetSignatureProblem(signature.keyId, KeySetSignatureProblem.Reason.RepeatedKey))
                continue
            }
            signers.add(verified)
        }
        return Count(signers, problems)
    }
}
