package dev.modelcast.client.trust

import dev.modelcast.client.format.Json
import dev.modelcast.client.format.JsonException
import dev.modelcast.client.format.JsonValue

/**
 * The inline form of a modelcast manifest's signature, for clients that want one file.
 *
 * The manifest carries a last member `"signature"`. The signed bytes are the manifest
 * exactly as modelcast writes it without that member: cut the file at the last occurrence of
 * `,\n  "signature": ` and append `\n}\n`. No string in a modelcast manifest holds a raw
 * newline (JSON escapes it), so the cut is unambiguous. The member holds the parts of a
 * minisign signature file, so a client rebuilds `manifest.json.minisig` over the signed
 * bytes and checks it as a detached one.
 */
object InlineSignature {
    private val MARKER = ",\n  \"signature\": ".toByteArray(Charsets.UTF_8)
    private val CLOSING = "\n}\n".toByteArray(Charsets.UTF_8)

    /** A manifest cut at its inline signature: the [signed] bytes and the signature [member]'s JSON text. */
    class Split(val signed: ByteArray, val member: ByteArray)

    /** The signed bytes of [manifest]: the manifest without its signature member, or itself when it has none. */
    fun strip(manifest: ByteArray): ByteArray = split(manifest)?.signed ?: manifest

    /** The signed bytes and the signature member, or null when [manifest] carries no inline signature. */
    fun split(manifest: ByteArray): Split? {
        if (manifest.size <= MARKER.size + CLOSING.size || !endsWith(manifest, CLOSING)) return null
        var index = manifest.size - CLOSING.size - MARKER.size
        while (index >= 0) {
            if (regionMatches(manifest, index, MARKER)) {
                val member = manifest.copyOfRange(index + MARKER.size, manifest.size - CLOSING.size)
                return Split(manifest.copyOfRange(0, index) + CLOSING, member)
            }
            index -= 1
        }
        return null
    }

    /**
     * The minisign signature file an inline signature member stands for (untrusted comment
     * `inline signature`). Throws [TrustError.InvalidInlineSignature] when the member is not
     * JSON, its format is not `minisign`, a part is missing or not a string, or a part holds a
     * line break (which would smuggle in a fifth line).
     */
    fun signatureFile(member: ByteArray): String {
        fun fail(why: String) = TrustError.InvalidInlineSignature(why)
        val value = try {
            Json.parse(member, 64)
        } catch (error: JsonException) {
            throw fail("not valid JSON")
        }
        val members = (value as? JsonValue.Object)?.members ?: emptyMap<String, JsonValue>()
        fun text(name: String) = (members[name] as? JsonValue.Text)?.value
        if (text("format") != "minisign") throw fail("format is not \"minisign\"")
        val signature = text("signature")
        val comment = text("trusted_comment")
        val global = text("global_signature")
        if (signature == null || comment == null || global == null) {
            throw fail("signature, trusted_comment and global_signature must all be strings")
        }
        if (listOf(signature, comment, global).any { it.contains('\n') || it.contains('\r') }) throw fail("a field contains a line break")
        return "${UNTRUSTED_COMMENT_PREFIX}inline signature\n$signature\n$TRUSTED_COMMENT_PREFIX$comment\n$global\n"
    }

    private fun endsWith(bytes: ByteArray, suffix: ByteArray): Boolean = regionMatches(bytes, bytes.size - suffix.size, suffix)

    private fun regionMatches(bytes: ByteArray, offset: Int, part: ByteArray): Boolean {
        if (offset < 0 || offset + part.size > bytes.size) return false
        for (index in part.indices) if (bytes[offset + index] != part[index]) return false
        return true
    }
}
