package dev.modelcast.client.trust

import dev.modelcast.client.format.ManifestValueException

/**
 * Why a key set, the link to it, or a manifest under it is not trusted (the Swift client's
 * `KeySetError`). Each case carries the values involved, which the conformance vectors
 * match (`invalid_document` with the field, `version_gap` with the version found,
 * `threshold_not_met` with the role and whose threshold, `expired`); the message is the one
 * line shown to people. A `.sigs` file that cannot be read is a [TrustError.MalformedSignature]
 * naming it ([MinisignSignatureList.parse]).
 */
sealed class KeySetError(message: String) : Exception(message) {
    /** The key set file at [path] (`keys/N.json`). */
    abstract val path: String

    /** The document at [path] breaks a rule of the format ([error] names the field and value). */
    class InvalidDocument(override val path: String, val error: ManifestValueException) :
        KeySetError("key set $path: ${error.message}")

    /** The document fetched as the version after [trusted] says it is [found]. */
    class VersionGap(override val path: String, val trusted: Long, val found: Long) :
        KeySetError("key set $path says version $found; the version after $trusted must be ${trusted + 1} (key sets are walked one version at a time)")

    /**
     * Fewer than [threshold] distinct keys of key set [keySetVersion]'s [role] made a counted
     * signature over [path] (a key set or a manifest): [signers] did; [problems] says why the
     * others did not count.
     */
    class ThresholdNotMet(
        override val path: String,
        val role: KeySetRoleName,
        val keySetVersion: Long,
        val threshold: Int,
        val signers: List<MinisignKeyId>,
        val problems: List<KeySetSignatureProblem>
    ) : KeySetError("$path is signed by ${signers.size} of key set $keySetVersion's $role keys (" +
        (if (signers.isEmpty()) "none" else signers.joinToString(", ") { it.hex }) + "); it needs $threshold" +
        (if (problems.isEmpty()) "" else "; " + problems.joinToString("; ")))

    /**
     * The newest key set expired at [expiresAt] (it is [now]): a client trusts no manifest
     * under it until a newer key set is published.
     */
    class Expired(override val path: String, val expiresAt: String, val now: String) :
        KeySetError("key set $path expired at $expiresAt (now $now): publish a newer key set signed by the root keys")
}

/** A signature that did not count towards a threshold, and why (for the message). */
class KeySetSignatureProblem(
    /** The key id the signature names. */
    val keyId: MinisignKeyId,
    /** Why it did not count. */
    val reason: Reason
) {
    /** Why a signature did not count. */
    sealed class Reason {
        /** Its key id is none of the role's keys. */
        object NotARoleKey : Reason()
        /** A key already counted signed again; it counts once. */
        object RepeatedKey : Reason()
        /** It does not verify (altered data or comment, a legacy signature): [error] says how. */
        class Invalid(val error: TrustError) : Reason()
        /** It verifies, but its trusted comment does not bind this document ([detail] says how). */
        class CommentMismatch(val detail: String) : Reason()
    }

    /** "key id ABC: …". */
    override fun toString(): String = when (val reason = reason) {
        is Reason.NotARoleKey -> "key id ${keyId.hex} is not one of its keys"
        is Reason.RepeatedKey -> "key id ${keyId.hex} signed more than once (counted once)"
        is Reason.Invalid -> "key id ${keyId.hex}: ${reason.error.message}"
        is Reason.CommentMismatch -> "key id ${keyId.hex}: ${reason.detail}"
    }
}
