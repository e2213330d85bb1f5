package dev.modelcast.client.trust

import dev.modelcast.client.format.JsonValue
import dev.modelcast.client.quoted

/**
 * One JSON object of a model signature bundle or its statement, which are hostile input: it
 * must be an object, hold only the members its kind has (unless [allowed] is null, for
 * objects whose specification says unknown members are ignored), and each member must have
 * its type. Errors are [FieldError]s naming the member's place
 * (`payload.predicate.resources[3].digest`) and the value.
 */
internal class BundleFields(value: JsonValue, val field: String, allowed: Set<String>?) {
    private val members: Map<String, JsonValue>

    init {
        if (value !is JsonValue.Object) throw refuse(field, value, "is not a JSON object")
        if (allowed != null) {
            // Sorted, so the member named is the same whichever order the document has.
            for (name in value.members.keys.sorted()) {
                if (name !in allowed) {
                    throw FieldError(field, quoted(name), "is not a member of this object (expected: ${allowed.sorted().joinToString(", ")})")
                }
            }
        }
        members = value.members
    }

    fun path(key: String): String = "$field.$key"

    fun has(key: String): Boolean = members.containsKey(key)

    fun value(key: String): JsonValue = members[key] ?: throw FieldError(path(key), "(missing)", "is required")

    fun obj(key: String, allowed: Set<String>?): BundleFields = BundleFields(value(key), path(key), allowed)

    /** A string of at most [limit] UTF-8 bytes. */
    fun string(key: String, limit: Int = MAXIMUM_TEXT): String = string(value(key), path(key), limit)

    /** A string that must be exactly [expected] (a media type, an algorithm name). */
    fun constant(key: String, expected: String, otherwise: String? = null) {
        val text = string(key)
        if (text != expected) throw FieldError(path(key), quoted(text), otherwise ?: "is not '$expected'")
    }

    fun bool(key: String): Boolean {
        val value = value(key)
        return (value as? JsonValue.Bool)?.value ?: throw refuse(path(key), value, "is not true or false")
    }

    /** An array of at most [limit] items. */
    fun array(key: String, limit: Int): List<JsonValue> {
        val value = value(key)
        val items = (value as? JsonValue.Array)?.items ?: throw refuse(path(key), value, "is not an array")
        if (items.size > limit) throw FieldError(path(key), "(${items.size} items)", "has more than $limit items")
        return items
    }

    /** 64 lowercase hex digits, as model_signing writes every digest. */
    fun digest(key: String): String {
        val text = string(key)
        if (!isSha256Hex(text)) throw FieldError(path(key), quoted(text), "is not a SHA-256 digest (64 lowercase hex digits)")
        return text
    }

    /** Strict standard base64 (padded, canonical) of at most [limit] decoded bytes. */
    fun base64(key: String, limit: Int): ByteArray {
        val text = string(key, (limit + 2) / 3 * 4)
        return strictBase64(text) ?: throw FieldError(path(key), quoted(text.take(40)), "is not standard padded base64")
    }

    companion object {
        /** The longest string read, other than base64 fields (which have their own limits). */
        const val MAXIMUM_TEXT = 4096

        fun string(value: JsonValue, field: String, limit: Int = MAXIMUM_TEXT): String {
            val text = (value as? JsonValue.Text)?.value ?: throw refuse(field, value, "is not a string")
            if (text.toByteArray(Charsets.UTF_8).size > limit) throw refuse(field, value, "is longer than $limit bytes")
            return text
        }

        /** The value as a message shows it: a string quoted, containers described, scalars as written. */
        fun shown(value: JsonValue): String = when (value) {
            is JsonValue.Text -> quoted(value.value)
            is JsonValue.Object -> "(an object)"
            is JsonValue.Array -> "(an array of ${value.items.size})"
            else -> value.toString()
        }

        fun refuse(field: String, value: JsonValue, rule: String): FieldError = FieldError(field, shown(value), rule)
    }
}

/** Whether [text] is 64 lowercase hex digits. */
internal fun isSha256Hex(text: String): Boolean = text.length == 64 && text.all { it in '0'..'9' || it in 'a'..'f' }

/**
 * Standard base64 only when canonical: alphabet `A–Z a–z 0–9 + /`, padded to a multiple of
 * four with at most two `=`, and re-encoding gives the same text (no stray bits); else null.
 */
internal fun strictBase64(text: String): ByteArray? {
    if (text.isEmpty()) return ByteArray(0)
    if (text.any { it == ' ' || it == '\t' }) return null  // decodeBase64 would trim them
    val bytes = decodeBase64(text) ?: return null
    return if (encodeBase64(bytes) == text) bytes else null
}
