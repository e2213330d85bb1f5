package dev.modelcast.client.format

// Reading a decoded JSON document field by field, each failure naming the field's path.
// Absent and `null` are the same for an optional field (as the Swift client's decoder has it).

/** The members of one JSON object found at [path] (`models.m`, empty for the document). */
internal class JsonFields(val members: Map<String, JsonValue>, val path: String) {
    /** The path of member [key]. */
    fun pathOf(key: String): String = if (path.isEmpty()) fieldName(key) else path + "." + fieldName(key)

    private fun present(key: String): JsonValue? = members[key]?.takeIf { it != JsonValue.Null }

    private fun required(key: String, what: String): JsonValue =
        present(key) ?: throw ManifestValueException(pathOf(key), null, if (key in members) "is null ($what is needed)" else "is missing ($what is needed)")

    private fun wrong(key: String, value: JsonValue, what: String): Nothing =
        throw ManifestValueException(pathOf(key), compactText(value), "is not $what")

    fun string(key: String): String = required(key, "a string").let { it.stringValue ?: wrong(key, it, "a string") }

    fun optionalString(key: String): String? = present(key)?.let { it.stringValue ?: wrong(key, it, "a string") }

    fun long(key: String): Long = required(key, "a whole number").let { exactLong(it) ?: wrong(key, it, WHOLE) }

    fun optionalLong(key: String): Long? = present(key)?.let { exactLong(it) ?: wrong(key, it, WHOLE) }

    fun double(key: String): Double = required(key, "a number").let { value ->
        when (value) {
            is JsonValue.Integer -> value.value.toDouble()
            is JsonValue.Decimal -> value.toDouble().takeIf { !it.isInfinite() } ?: wrong(key, value, "a number within the range of a double")
            else -> wrong(key, value, "a number")
        }
    }

    fun fields(key: String): JsonFields = required(key, "an object").let { value ->
        (value as? JsonValue.Object)?.let { JsonFields(it.members, pathOf(key)) } ?: wrong(key, value, "an object")
    }

    fun optionalFields(key: String): JsonFields? = present(key)?.let { value ->
        (value as? JsonValue.Object)?.let { JsonFields(it.members, pathOf(key)) } ?: wrong(key, value, "an object")
    }

    fun array(key: String): List<JsonValue> = required(key, "an array").let { value -> (value as? JsonValue.Array)?.items ?: wrong(key, value, "an array") }

    fun optionalArray(key: String): List<JsonValue>? = present(key)?.let { value -> (value as? JsonValue.Array)?.items ?: wrong(key, value, "an array") }

    /** Item [index] of the array at [key] as an object. */
    fun item(key: String, index: Int, value: JsonValue): JsonFields {
        val itemPath = "${pathOf(key)}[$index]"
        return (value as? JsonValue.Object)?.let { JsonFields(it.members, itemPath) }
            ?: throw ManifestValueException(itemPath, compactText(value), "is not an object")
    }

    /** A free-form value (meta, interface): any JSON, numbers as the Swift client holds them ([freeForm]). */
    fun optionalFreeForm(key: String): JsonValue? = present(key)?.let { freeForm(it, pathOf(key)) }

    /** [make] applied to the value of [key]; a refusal it throws is placed at the field. */
    fun <T> parsed(key: String, text: String, make: (String) -> T): T =
        try { make(text) } catch (error: ManifestValueException) { throw error.within(pathOf(key)) }

    private companion object {
        const val WHOLE = "a whole number from -2^63 to 2^63-1"
    }
}

/** [value] as an exact 64-bit integer ([JsonValue.toLongExact]), or null. */
internal fun exactLong(value: JsonValue): Long? = value.toLongExact()

/**
 * A free-form value as the Swift client reads it into its `JSONValue`: a number that is a
 * 64-bit integer becomes [JsonValue.Integer], any other a [JsonValue.Decimal] of its double
 * (so `0.10` and `0.1` are one value); a number beyond the double range is refused.
 */
internal fun freeForm(value: JsonValue, path: String): JsonValue = when (value) {
    is JsonValue.Decimal -> exactLong(value)?.let { JsonValue.Integer(it) } ?: value.toDouble().let { double ->
        if (double.isInfinite()) throw ManifestValueException(path, value.text, "is a number beyond the range of a double")
        JsonValue.Decimal(double.toString())
    }
    is JsonValue.Array -> JsonValue.Array(value.items.mapIndexed { index, item -> freeForm(item, "$path[$index]") })
    is JsonValue.Object -> JsonValue.Object(value.members.entries.associateTo(LinkedHashMap()) { (key, member) ->
        key to freeForm(member, "$path.${fieldName(key)}")
    })
    else -> value
}

/** [value] as compact JSON, cut to 200 characters, for an error message. */
internal fun compactText(value: JsonValue): String {
    val text = Json.write(value)
    return if (text.length > 200) text.substring(0, 200) + "…" else text
}
