package dev.modelcast.client.format

import java.nio.ByteBuffer
import java.nio.charset.CharacterCodingException
import java.nio.charset.CodingErrorAction

/**
 * The JSON reading rules for documents every client must read the same way (a key set,
 * `keys/N.json`): signed bytes two readers could see as two different documents are
 * refused, not read one way. [Json.parse] already refuses most of that (a repeated key,
 * leading zeros, raw control characters, lone surrogate escapes, invalid UTF-8 inside
 * strings, text after the value); on top of it this refuses a byte-order mark (which
 * [Json.parse] tolerates for manifests), nesting deeper than [MAX_DEPTH], and bytes that are
 * not UTF-8 anywhere (named as the whole document, as the Swift client's `StrictJSON` does).
 * A number is an integer only when written as one: [JsonValue.Integer]; `2.0` and `2e0` stay
 * [JsonValue.Decimal], which an integer field of a key set refuses.
 *
 * Errors are [ManifestValueException]s naming the JSON path (`(document)` for the whole):
 * a repeated key is named by its own path (`version`), so every client names the same field.
 */
object StrictJson {
    /** Objects and arrays nested deeper than this are refused (a key set nests 3 levels). */
    const val MAX_DEPTH = 8

    /** The field name of the document as a whole. */
    const val DOCUMENT = "(document)"

    /** Parses [bytes] by the rules above; objects keep the document's member order. */
    @JvmStatic
    fun parse(bytes: ByteArray): JsonValue {
        if (!isUtf8(bytes)) throw ManifestValueException(DOCUMENT, null, "is not UTF-8 text")
        if (bytes.size >= 3 && bytes[0] == 0xEF.toByte() && bytes[1] == 0xBB.toByte() && bytes[2] == 0xBF.toByte()) {
            throw ManifestValueException(DOCUMENT, null, "starts with a byte-order mark (readers disagree on whether it is part of the text)")
        }
        try {
            return Json.parse(bytes, MAX_DEPTH)
        } catch (error: JsonException) {
            val key = error.duplicateKey
            if (key != null) {
                val member = if (error.path.isEmpty()) fieldName(key) else error.path + "." + fieldName(key)
                throw ManifestValueException(member, key, "appears twice in one object (readers would disagree on which one counts)")
            }
            val field = if (error.path.isEmpty()) DOCUMENT else error.path
            if (error.tooDeep) throw ManifestValueException(field, null, error.reason)
            throw ManifestValueException(field, null, "is not JSON (${error.reason} at byte ${error.offset})")
        }
    }

    /**
     * Whether [bytes] are UTF-8 by the JDK's decoder. [Json.parse] checks every string's
     * bytes itself (overlong forms, surrogates), so this check only decides which field a
     * refusal names, and a laxer platform decoder lets nothing through.
     */
    private fun isUtf8(bytes: ByteArray): Boolean = try {
        Charsets.UTF_8.newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT)
            .decode(ByteBuffer.wrap(bytes))
        true
    } catch (error: CharacterCodingException) {
        false
    }
}
