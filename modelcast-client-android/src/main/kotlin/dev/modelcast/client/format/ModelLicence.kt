package dev.modelcast.client.format

/**
 * What a licence acceptance is for: a model's licence as the manifest names it, by its SPDX
 * id or expression ([spdx]) and the URL of its text ([url]), at least one of them. Two terms
 * are the same licence only when both are exactly equal: a publisher changing either one
 * (a new version of the text at a new URL) makes devices ask again.
 *
 * [spdx]: 1 to 128 characters: ASCII letters, digits, `.`, `-`, `+`, `:`, `(`, `)` and single
 * spaces between words (`Apache-2.0`, `MIT OR Apache-2.0`, `LicenseRef-Llama-3.2`).
 * [url]: an http or https URL of at most 2,048 printable ASCII characters with no user name
 * or password (the rules of [HttpUrl]).
 * @throws ManifestValueException when a value breaks its rule, or both are null.
 */
class LicenceTerms(spdx: String?, url: String?) {
    val spdx: String? = spdx?.also { checkSpdx(it) }
    val url: String? = url?.also { checkUrl(it) }

    init {
        if (spdx == null && url == null) throw ManifestValueException("", null, "names neither an SPDX licence nor a URL (a licence names at least one)")
    }

    override fun equals(other: Any?): Boolean = other is LicenceTerms && other.spdx == spdx && other.url == url
    override fun hashCode(): Int = (spdx?.hashCode() ?: 0) * 31 + (url?.hashCode() ?: 0)

    /** `Apache-2.0 (https://…)`, as a person reads it. */
    override fun toString(): String = listOfNotNull(spdx, url?.let { "($it)" }).joinToString(" ")

    companion object {
        /** The longest SPDX expression read. */
        const val MAX_SPDX_LENGTH = 128
        /** The longest licence URL read. */
        const val MAX_URL_LENGTH = 2048

        /**
         * Refuses a text that is no SPDX id or expression as modelcast writes one: what a
         * person is asked to accept is shown to them, so no control, invisible or look-alike
         * character, and no run of spaces that hides a word, gets through.
         */
        @JvmStatic
        fun checkSpdx(text: String) {
            fun refuse(rule: String): Nothing = throw ManifestValueException("", text, rule)
            if (text.isEmpty() || text.length > MAX_SPDX_LENGTH) refuse("is not 1 to $MAX_SPDX_LENGTH characters long")
            val bad = text.firstOrNull { !(it in 'a'..'z' || it in 'A'..'Z' || it in '0'..'9' || it in ".-+:() ") }
            if (bad != null) refuse("is not an SPDX licence id or expression (it has ${unicodeName(bad.toInt())}; letters, digits, '.', '-', '+', ':', '(', ')' and single spaces only)")
            if (text.startsWith(" ") || text.endsWith(" ") || text.contains("  ")) {
                refuse("is not an SPDX licence id or expression (spaces only single, between words)")
            }
        }

        /**
         * Refuses a licence URL that is not a plain http or https address: [HttpUrl]'s rules
         * (a user name or password is refused without being repeated) and at most 2,048 characters.
         */
        @JvmStatic
        fun checkUrl(text: String) {
            // Not repeated: a text that long is no address a person checks, and may carry a password.
            if (text.length > MAX_URL_LENGTH) throw ManifestValueException("", null, "is longer than $MAX_URL_LENGTH characters (a licence URL)")
            HttpUrl(text)
        }
    }
}

/** Whether a device asks the app's user before it downloads a model ([REQUIRED]) or not ([NONE], the default). */
enum class LicenceAcceptance(val wireName: String) {
    REQUIRED("required"),
    NONE("none");

    override fun toString(): String = wireName

    companion object {
        /**
         * The acceptance written [text].
         * @throws ManifestValueException when it is neither `required` nor `none`.
         */
        @JvmStatic
        fun parse(text: String): LicenceAcceptance = values().firstOrNull { it.wireName == text }
            ?: throw ManifestValueException("", text, "is not a licence acceptance (required or none)")
    }
}

/** A model's `licence`: its [terms] and whether the user must accept them before the model is downloaded. */
data class ModelLicence(val terms: LicenceTerms, val acceptance: LicenceAcceptance = LicenceAcceptance.NONE)
