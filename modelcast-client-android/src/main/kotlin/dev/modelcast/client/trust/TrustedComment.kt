package dev.modelcast.client.trust

import dev.modelcast.client.quoted

/**
 * What the signed trusted comment of a modelcast manifest says: tab-separated `key:value`
 * fields `timestamp`, `file`, `sequence`, `version`, `expires`. The comment is covered by
 * the signature, so these values cannot be changed without the key; they bind the signature
 * to one manifest (its sequence, expiry, and the file that names its channel).
 */
data class TrustedComment(
    val timestamp: Long,
    /** The manifest's key: `manifest.json` for stable, `channels/NAME/manifest.json` otherwise. */
    val file: String,
    val sequence: Long,
    /** The model version, or `name@version` pairs joined by `,` when the models differ. */
    val version: String,
    /** RFC 3339; null when the manifest never expires (`expires:never`). */
    val expiresAt: String?
) {
    /** The comment's text, as modelcast writes it. */
    val text: String
        get() = "timestamp:$timestamp\tfile:$file\tsequence:$sequence\tversion:$version\texpires:${expiresAt ?: "never"}"

    /**
     * Where the manifest and this signed comment disagree, in the order a client checks
     * (empty when the signature binds this manifest): the manifest's sequence differs; the
     * manifest has an expiry and this one differs (a manifest without `expires_at` may carry
     * one only here); the comment's file is not [fileField] of [channel] and [manifestName].
     * A client refuses the manifest on the first.
     */
    fun problems(sequence: Long?, expiresAt: String?, channel: String, manifestName: String): List<BindingProblem> {
        val problems = ArrayList<BindingProblem>()
        if (sequence != null && sequence != this.sequence) {
            problems.add(BindingProblem(BindingProblem.Field.SEQUENCE, "the manifest says sequence $sequence, its signature says ${this.sequence}"))
        }
        if (expiresAt != null && expiresAt != this.expiresAt) {
            problems.add(BindingProblem(BindingProblem.Field.EXPIRES_AT,
                "the manifest says expires_at $expiresAt, its signature says ${this.expiresAt ?: "never"}"))
        }
        val expected = fileField(channel, manifestName)
        if (file != expected) problems.add(BindingProblem(BindingProblem.Field.FILE, "the signature is for ${quoted(file)}, not $expected"))
        return problems
    }

    companion object {
        /**
         * Parses a trusted comment modelcast wrote; null for any other comment (minisign's
         * default, say), which a client refuses. Parts are split at tabs, empty ones skipped;
         * each needs a `:` (the key is before the first); `timestamp` and `sequence` are
         * signed 64-bit decimal integers; `file`, `version` and `expires` must be present;
         * unknown keys are ignored and a repeated key's last value counts.
         */
        fun parse(text: String): TrustedComment? {
            val fields = HashMap<String, String>()
            for (part in text.split('\t')) {
                if (part.isEmpty()) continue
                val colon = part.indexOf(':')
                if (colon < 0) return null
                fields[part.substring(0, colon)] = part.substring(colon + 1)
            }
            val timestamp = fields["timestamp"]?.let(::parseInt64) ?: return null
            val file = fields["file"] ?: return null
            val sequence = fields["sequence"]?.let(::parseInt64) ?: return null
            val version = fields["version"] ?: return null
            val expires = fields["expires"] ?: return null
            return TrustedComment(timestamp, file, sequence, version, if (expires == "never") null else expires)
        }

        /**
         * The `file` field of a channel's manifest signature: the manifest's name for stable
         * (`manifest.json`), `channels/NAME/<name>` for any other channel, so a signature
         * binds the channel and a signed beta manifest served at stable's URL is refused.
         */
        fun fileField(channel: String, manifestName: String): String =
            if (channel == TargetKeys.STABLE_CHANNEL) manifestName else "${TargetKeys.CHANNELS_FOLDER}$channel/$manifestName"

        /**
         * A signed 64-bit decimal integer: an optional `+` or `-`, then ASCII digits only (no
         * spaces, no other scripts' digits), in range; else null.
         */
        internal fun parseInt64(text: String): Long? {
            val digits = if (text.startsWith("+") || text.startsWith("-")) text.substring(1) else text
            if (digits.isEmpty() || digits.any { it !in '0'..'9' }) return null
            return try {
                java.lang.Long.parseLong(if (text.startsWith("-")) "-$digits" else digits)
            } catch (error: NumberFormatException) {
                null
            }
        }
    }
}

/** One way a signed comment fails to bind a manifest: which [field], and why. */
data class BindingProblem(val field: Field, val reason: String) {
    /** The manifest value at fault, as the conformance vectors name it. */
    enum class Field(val vectorName: String) { SEQUENCE("sequence"), EXPIRES_AT("expires_at"), FILE("file") }
}
