package dev.modelcast.client.format

/** Reading and writing JSON text: the only JSON code of the client. */
object Json {
    /**
     * Parses [bytes] as one JSON value (RFC 8259, UTF-8), refusing anything else: invalid
     * UTF-8, lone surrogates, raw control characters in strings, duplicate keys, trailing
     * commas or bytes, and nesting deeper than [maxDepth] (the document being level 1).
     * Integers are kept exact; see [JsonValue].
     * @throws JsonException naming the byte offset and the member being read.
     */
    @JvmStatic
    @JvmOverloads
    fun parse(bytes: ByteArray, maxDepth: Int = ManifestLimits.MAX_DEPTH): JsonValue = JsonReader(bytes, maxDepth).document()

    /**
     * Compact JSON text of [value]: no whitespace, members in their order, `"`, `\` and
     * control characters escaped, everything else (non-ASCII included) written as is.
     * [JsonValue.Decimal] is written as its literal.
     */
    @JvmStatic
    fun write(value: JsonValue): String {
        val out = StringBuilder()
        write(value, out)
        return out.toString()
    }

    private fun write(value: JsonValue, out: StringBuilder) {
        when (value) {
            is JsonValue.Null -> out.append("null")
            is JsonValue.Bool -> out.append(if (value.value) "true" else "false")
            is JsonValue.Integer -> out.append(value.value)
            is JsonValue.Decimal -> out.append(value.text)
            is JsonValue.Text -> writeString(value.value, out)
            is JsonValue.Array -> {
                out.append('[')
                value.items.forEachIndexed { index, item ->
                    if (index > 0) out.append(',')
                    write(item, out)
                }
                out.append(']')
            }
            is JsonValue.Object -> {
                out.append('{')
                var first = true
                for ((key, member) in value.members) {
                    if (!first) out.append(',')
                    first = false
                    writeString(key, out)
                    out.append(':')
                    write(member, out)
                }
                out.append('}')
            }
        }
    }

    private fun writeString(text: String, out: StringBuilder) {
        out.append('"')
        var index = 0
        while (index < text.length) {
            val char = text[index]
            val paired = Character.isHighSurrogate(char) && index + 1 < text.length && Character.isLowSurrogate(text[index + 1])
            when {
                char == '"' -> out.append("\\\"")
                char == '\\' -> out.append("\\\\")
                char == '\n' -> out.append("\\n")
                char == '\r' -> out.append("\\r")
                char == '\t' -> out.append("\\t")
                paired -> { out.append(char).append(text[index + 1]); index++ }
                // Control characters, and a lone surrogate (kept visible as an escape, never a '?').
                char < ' ' || Character.isSurrogate(char) -> out.append(String.format(java.util.Locale.ROOT, "\\u%04x", char.toInt()))
                else -> out.append(char)
            }
            index++
        }
        out.append('"')
    }
}
