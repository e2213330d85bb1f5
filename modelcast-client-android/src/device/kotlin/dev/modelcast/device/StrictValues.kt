package dev.modelcast.device

import dev.modelcast.client.format.AppVersion
import dev.modelcast.client.format.ManifestValueException
import dev.modelcast.client.quoted
import java.io.File
import java.io.IOException
import java.net.URI
import java.net.URISyntaxException
import java.nio.ByteBuffer
import java.nio.charset.CharacterCodingException
import java.nio.charset.CodingErrorAction
import java.nio.file.Files

/**
 * The option values of the protocol, parsed exactly: each accepts one written form and
 * refuses anything else with a [UsageError] that names the option ([label]) and the value.
 */
object StrictValue {
    /** Decimal digits only (no sign, no unit, no exponent) that fit in 63 bits. */
    fun count(text: String, label: String, positive: Boolean, unit: String): Long {
        val value = if (text.isNotEmpty() && text.all { it in '0'..'9' }) text.toLongOrNull() else null
        if (value == null || (positive && value <= 0)) {
            throw UsageError("$label ${quoted(text)} is not ${if (positive) "a positive" else "a"} number of $unit (decimal digits)")
        }
        return value
    }

    /** Seconds written `30` or `2.5`, more than zero. */
    fun seconds(text: String, label: String): Double {
        val parts = text.split(".", limit = 2)
        val digits = parts.all { part -> part.isNotEmpty() && part.all { it in '0'..'9' } }
        val value = if (digits) text.toDoubleOrNull() else null
        if (value == null || value.isInfinite() || value <= 0) {
            throw UsageError("$label ${quoted(text)} is not a positive number of seconds (30, 2.5)")
        }
        return value
    }

    /** A name for people and logs: printable, no space or control character, at most 256 characters. */
    fun name(text: String, label: String): String {
        var visible = true
        var index = 0
        while (index < text.length) {
            val point = text.codePointAt(index)
            index += Character.charCount(point)
            if (Character.isWhitespace(point) || Character.isSpaceChar(point) || isInvisible(point)) visible = false
        }
        if (text.isEmpty() || text.codePointCount(0, text.length) > 256 || !visible) {
            throw UsageError("$label ${quoted(text)} is not a name (visible characters, no space, at most 256)")
        }
        return text
    }

    /** The channel's manifest URL: `http://` or `https://` with a host, no user or password. */
    fun manifestURL(text: String, label: String): URI {
        val uri = try { URI(text) } catch (error: URISyntaxException) { null }
        val scheme = uri?.scheme.orEmpty()
        if (uri == null || !(scheme.equals("http", ignoreCase = true) || scheme.equals("https", ignoreCase = true)) || uri.host.isNullOrEmpty()) {
            throw UsageError("$label ${quoted(text)} is not an http:// or https:// URL")
        }
        if (uri.rawUserInfo != null) throw UsageError("$label carries a user name or password; it is not kept")
        return uri
    }

    /**
     * The text of a file the option names: a regular file of at most [limit] bytes, read in
     * full as UTF-8. Key files are read at `init` and their text kept, so nothing outside the
     * client's directory is needed later.
     */
    fun fileText(path: String, label: String, limit: Int = 64 shl 10): String {
        // A link to a key file is fine: what matters is the file it leads to.
        val file = File(path)
        if (!file.exists()) throw UsageError("$label ${quoted(path)}: no such file")
        if (!file.isFile) throw UsageError("$label ${quoted(path)} is not a regular file")
        if (file.length() > limit) throw UsageError("$label ${quoted(path)} is larger than $limit bytes; it is no key")
        val bytes = try { Files.readAllBytes(file.toPath()) } catch (error: IOException) {
            throw UsageError("$label ${quoted(path)} cannot be read: ${error.message}")
        }
        if (bytes.size > limit) throw UsageError("$label ${quoted(path)} is larger than $limit bytes; it is no key")
        return utf8(bytes) ?: throw UsageError("$label ${quoted(path)} cannot be read as UTF-8 text")
    }

    /** [bytes] as UTF-8 text, or null when they are not UTF-8 (no replacement character is made up). */
    fun utf8(bytes: ByteArray): String? = try {
        Charsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT)
            .decode(ByteBuffer.wrap(bytes)).toString()
    } catch (error: CharacterCodingException) {
        null
    }
}

/** An app or OS version as the manifest's `min_app_version` and `platforms` compare them. */
fun StrictValue.version(text: String, label: String): String {
    try {
        AppVersion(text)
    } catch (error: ManifestValueException) {
        throw UsageError("$label ${quoted(text)} is not a version (e.g. 5.2, 1.4.0, 17.4.1)")
    }
    return text
}
