package dev.modelcast.device

/**
 * JSON as the device writes it (`device.json`, `state`'s document): objects with their keys
 * sorted, two spaces of indent, strings escaped so that no control or invisible character
 * reaches the file or the terminal raw. Values are [Map] (string keys), [List], [String],
 * [Number], [Boolean] and null.
 */
object JsonText {
    fun pretty(value: Any?): String = StringBuilder().also { write(value, it, "") }.toString()

    private fun write(value: Any?, out: StringBuilder, indent: String) {
        when (value) {
            null -> out.append("null")
            is String -> string(value, out)
            is Boolean -> out.append(value)
            is Int, is Long -> out.append(value)
            is Map<*, *> -> {
                if (value.isEmpty()) { out.append("{}"); return }
                val inner = "$indent  "
                out.append("{\n")
                value.entries.map { (key, item) -> key as String to item }.sortedBy { it.first }.forEachIndexed { index, (key, item) ->
                    if (index > 0) out.append(",\n")
                    out.append(inner)
                    string(key, out)
                    out.append(": ")
                    write(item, out, inner)
                }
                out.append('\n').append(indent).append('}')
            }
            is List<*> -> {
                if (value.isEmpty()) { out.append("[]"); return }
                val inner = "$indent  "
                out.append("[\n")
                value.forEachIndexed { index, item ->
                    if (index > 0) out.append(",\n")
                    out.append(inner)
                    write(item, out, inner)
                }
                out.append('\n').append(indent).append(']')
            }
            else -> throw IllegalArgumentException("no JSON form for ${value.javaClass.name}")
        }
    }

    /** [text] as a JSON string: `"`, `\` and every control or invisible character escaped (`\u…`). */
    fun string(text: String, out: StringBuilder) {
        out.append('"')
        var index = 0
        while (index < text.length) {
            val point = text.codePointAt(index)
            val count = Character.charCount(point)
            when {
                point == '"'.toInt() -> out.append("\\\"")
                point == '\\'.toInt() -> out.append("\\\\")
                point == '\n'.toInt() -> out.append("\\n")
                point == '\t'.toInt() -> out.append("\\t")
                point < 0x20 || point == 0x7f || isInvisible(point) ->
                    for (unit in text.substring(index, index + count)) out.append(String.format("\\u%04x", unit.toInt()))
                else -> out.appendCodePoint(point)
            }
            index += count
        }
        out.append('"')
    }
}
