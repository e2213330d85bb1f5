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

    /** `Apache-2.0 (https://…)`, `Apache-2.0` or `https://…`, as a person reads it (the Swift client's words). */
    override fun toString(): String = listOfNotNull(spdx, url?.let { if (spdx == null) it else "($it)" }).joinToString(" ")

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

/**
 * Whether a device asks the app's user before it downloads a model ([REQUIRED]) or not
 * ([NONE], the default), or a value this client does not know ([Unknown], a newer
 * publisher's: printable ASCII, at most 32 characters): that model waits, it is never
 * downloaded on a guess.
 */
sealed class LicenceAcceptance(
    /** The manifest's word for it. */
    val wireName: String
) {
    /** The user must accept the licence (ModelUpdater.acceptLicence) before the model is downloaded. */
    object Required : LicenceAcceptance("required")

    /** Nothing is asked. */
    object None : LicenceAcceptance("none")

    /** A value this client does not know, as written. */
    class Unknown(text: String) : LicenceAcceptance(text) {
        init {
            checkPrintable(text, 32, "a licence acceptance (required or none)")
        }

        override fun equals(other: Any?): Boolean = other is Unknown && other.wireName == wireName
        override fun hashCode(): Int = wireName.hashCode()
    }

    override fun toString(): String = wireName

    companion object {
        /** [Required], by the name the enum it replaces gave it. */
        @JvmField val REQUIRED: LicenceAcceptance = Required
        /** [None], by the name the enum it replaces gave it. */
        @JvmField val NONE: LicenceAcceptance = None

        /**
         * The acceptance written [text]: `required`, `none`, or [Unknown].
         * @throws ManifestValueException when another value is not printable ASCII of 1 to 32 characters.
         */
        @JvmStatic
        fun parse(text: String): LicenceAcceptance = when (text) {
            Required.wireName -> Required
            None.wireName -> None
            else -> Unknown(text)
        }
    }
}

/** A model's `licence`: its [terms] and whether the user must accept them before the model is downloaded. */
data class ModelLicence(val terms: LicenceTerms, val acceptance: LicenceAcceptance = LicenceAcceptance.NONE)
