package dev.modelcast.client.format

/**
 * Where a device downloads a file: an absolute `http` or `https` URL (the scheme in any
 * case) with a non-empty host, no user name or password (not even an empty `@`), only
 * printable ASCII (no spaces or control characters: they must be percent-encoded), at
 * most 4,096 characters. The rules are the Swift client's `DownloadURL` as its URL parser
 * applies them: the path, query and fragment are taken as they are.
 * @throws ManifestValueException when [text] is not one.
 */
class HttpUrl(text: String) {
    val text: String = text
    /** `http` or `https`, lowercased. */
    val scheme: String
    /** The host as written (a bracketed IP literal without its brackets). */
    val host: String

    init {
        fun refuse(rule: String): Nothing = throw ManifestValueException("", text, rule)
        if (utf8Length(text) > 4096) refuse("is longer than 4096 characters")
        if (!text.all { it in '!'..'~' }) refuse("is not a URL: it has spaces, control or non-ASCII characters (percent-encode them)")
        val colon = text.indexOf(':')
        val schemeText = if (colon > 0) text.substring(0, colon) else ""
        val schemeIsValid = schemeText.isNotEmpty() && schemeText[0].isAsciiLetter() &&
            schemeText.all { it.isAsciiLetter() || it in '0'..'9' || it == '+' || it == '-' || it == '.' }
        if (!schemeIsValid) refuse("is not an absolute URL")
        scheme = lowercased(schemeText)
        if (scheme != "http" && scheme != "https") refuse("is not an http or https URL (scheme '$scheme')")
        val rest = text.substring(colon + 1)
        if (!rest.startsWith("//")) refuse("has no host")
        val authorityEnd = rest.indexOfAny(charArrayOf('/', '?', '#'), 2).let { if (it < 0) rest.length else it }
        val authority = rest.substring(2, authorityEnd)
        val at = authority.lastIndexOf('@')
        val hostAndPort = authority.substring(at + 1)
        host = parseHost(hostAndPort) ?: refuse("is not a URL (its host or port cannot be read)")
        if (host.isEmpty()) refuse("has no host")
        // The credentials are not repeated in the message: it may be logged.
        if (at >= 0) throw ManifestValueException("", "$scheme://…@$host…", "carries a user name or password")
    }

    override fun equals(other: Any?): Boolean = other is HttpUrl && other.text == text
    override fun hashCode(): Int = text.hashCode()
    override fun toString(): String = text

    private companion object {
        fun Char.isAsciiLetter() = this in 'a'..'z' || this in 'A'..'Z'

        /** RFC 3986's host characters: unreserved, sub-delims and `%`. */
        fun isHostCharacter(char: Char) = char.isAsciiLetter() || char in '0'..'9' || char in "-._~!$&'()*+,;=%"

        /** The host of `host[:port]` (the port digits only, maybe none), or null when unreadable. */
        fun parseHost(text: String): String? {
            val host: String
            val afterHost: String
            if (text.startsWith("[")) {
                val close = text.indexOf(']')
                if (close < 0) return null
                host = text.substring(1, close)
                if (host.isEmpty() || !host.all { isHostCharacter(it) || it == ':' }) return null
                afterHost = text.substring(close + 1)
            } else {
                val colon = text.indexOf(':')
                host = if (colon < 0) text else text.substring(0, colon)
                if (!host.all(::isHostCharacter)) return null
                afterHost = if (colon < 0) "" else text.substring(colon)
            }
            if (afterHost.isNotEmpty() && !(afterHost[0] == ':' && afterHost.substring(1).all { it in '0'..'9' })) return null
            return host
        }
    }
}
