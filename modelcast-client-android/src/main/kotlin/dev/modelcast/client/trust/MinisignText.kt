package dev.modelcast.client.trust

/** The prefix of the first line of every minisign file. */
const val UNTRUSTED_COMMENT_PREFIX = "untrusted comment: "
/** The prefix of a signature file's third line. */
const val TRUSTED_COMMENT_PREFIX = "trusted comment: "

/**
 * The lines of a minisign file: split at LF, a CR before the LF dropped (CRLF files
 * verify), trailing empty lines ignored. A CR anywhere else stays in its line, where the
 * signature parser refuses it.
 */
internal fun minisignLines(text: String): List<String> {
    val lines = text.split('\n').map { it.removeSuffix("\r") }.toMutableList()
    while (lines.isNotEmpty() && lines.last().isEmpty()) lines.removeAt(lines.size - 1)
    return lines
}

/** The text after [prefix] when [line] starts with exactly it (the prefixes are ASCII), else null. */
internal fun textAfterPrefix(prefix: String, line: String): String? =
    if (line.startsWith(prefix)) line.substring(prefix.length) else null

/**
 * Standard padded base64 (what minisign writes), or null. Surrounding spaces and tabs are
 * ignored, as a pasted key often carries them; nothing else outside the alphabet is.
 */
internal fun decodeBase64(text: String): ByteArray? {
    val trimmed = text.trim { it == ' ' || it == '\t' }
    if (trimmed.isEmpty() || trimmed.length % 4 != 0) return null
    val padding = trimmed.length - trimmed.trimEnd('=').length
    if (padding > 2) return null
    for (index in 0 until trimmed.length - padding) if (!isBase64Digit(trimmed[index])) return null
    return try {
        java.util.Base64.getDecoder().decode(trimmed)
    } catch (error: IllegalArgumentException) {
        null
    }
}

/** Standard padded base64. */
internal fun encodeBase64(bytes: ByteArray): String = java.util.Base64.getEncoder().encodeToString(bytes)

internal fun isBase64Digit(c: Char): Boolean =
    c in 'A'..'Z' || c in 'a'..'z' || c in '0'..'9' || c == '+' || c == '/'

/**
 * The two algorithm bytes of a minisign structure for an error message: printable ASCII as
 * is (`'Ed'`), anything else in hex (`0x0000`).
 */
internal fun describeAlgorithm(bytes: ByteArray): String =
    if (bytes.all { it in 0x21..0x7e }) "'" + String(bytes, Charsets.US_ASCII) + "'"
    else "0x" + bytes.joinToString("") { String.format("%02x", it.toInt() and 0xff) }

internal fun ByteArray.toHex(): String = joinToString("") { String.format("%02x", it.toInt() and 0xff) }
