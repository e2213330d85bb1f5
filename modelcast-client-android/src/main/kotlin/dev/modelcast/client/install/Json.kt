package dev.modelcast.client.install

/**
 * The little JSON the client keeps for itself (`state.json`, a version's record, a zip's
 * stored-entry map): RFC 8259, read into maps (insertion-ordered), lists, strings, `Long`
 * for integers (`Double` for other numbers), booleans and null, nested at most 64 levels;
 * written with sorted keys, two-space indents. No library: the client depends on none.
 */
internal object Json {
    /** The deepest nesting read (a state file is 4 deep). */
    const val MAX_DEPTH = 64

    /** The value `text` holds. @throws JsonError naming the offset. */
    fun parse(text: String): Any? {
        val reader = Reader(text)
        reader.space()
        val value = reader.value(0)
        reader.space()
        if (reader.at < text.length) throw JsonError("unexpected text at offset ${reader.at}")
        return value
    }

    /** `value` as pretty JSON, keys sorted. */
    fun write(value: Any?): String = StringBuilder().also { write(value, it, 0) }.append('\n').toString()

    private fun write(value: Any?, out: StringBuilder, indent: Int) {
        when (value) {
            null -> out.append("null")
            is String -> string(value, out)
            is Boolean, is Long, is Int -> out.append(value.toString())
            is Double -> out.append(if (value == Math.floor(value) && Math.abs(value) < 1e15) value.toLong().toString() else value.toString())
            is Map<*, *> -> {
                if (value.isEmpty()) { out.append("{}"); return }
                out.append("{\n")
                val keys = value.keys.map { it as String }.sorted()
                for ((index, key) in keys.withIndex()) {
                    pad(out, indent + 1)
                    string(key, out)
                    out.append(" : ")
                    write(value[key], out, indent + 1)
                    out.append(if (index < keys.size - 1) ",\n" else "\n")
                }
                pad(out, indent)
                out.append('}')
            }
            is List<*> -> {
                if (value.isEmpty()) { out.append("[]"); return }
                out.append("[\n")
                for ((index, item) in value.withIndex()) {
                    pad(out, indent + 1)
                    write(item, out, indent + 1)
                    out.append(if (index < value.size - 1) ",\n" else "\n")
                }
                pad(out, indent)
                out.append(']')
            }
            else -> throw IllegalArgumentException("not a JSON value: ${value.javaClass.simpleName}")
        }
    }

    private fun pad(out: StringBuilder, indent: Int) {
        for (i in 0 until indent) out.append("  ")
    }

    private fun string(text: String, out: StringBuilder) {
        out.append('"')
        for (char in text) {
            when {
                char == '"' -> out.append("\\\"")
                char == '\\' -> out.append("\\\\")
                char == '\n' -> out.append("\\n")
                char == '\r' -> out.append("\\r")
                char == '\t' -> out.append("\\t")
                char < ' ' || char == '\u2028' || char == '\u2029' -> out.append(String.format("\\u%04x", char.toInt()))
                else -> out.append(char)
            }
        }
        out.append('"')
    }

    private class Reader(val text: String) {
        var at = 0

        fun space() {
            while (at < text.length && (text[at] == ' ' || text[at] == '\n' || text[at] == '\r' || text[at] == '\t')) at++
        }

        fun value(depth: Int): Any? {
            if (depth > MAX_DEPTH) throw JsonError("nested deeper than $MAX_DEPTH levels at offset $at")
            if (at >= text.length) throw JsonError("the text ends where a value should be")
            return when (text[at]) {
                '{' -> objectValue(depth)
                '[' -> listValue(depth)
                '"' -> stringValue()
                't' -> word("true", true)
                'f' -> word("false", false)
                'n' -> word("null", null)
                else -> number()
            }
        }

        private fun word(word: String, value: Any?): Any? {
            if (!text.startsWith(word, at)) throw JsonError("unexpected text at offset $at")
            at += word.length
            return value
        }

        private fun objectValue(depth: Int): Map<String, Any?> {
            at++
            val out = LinkedHashMap<String, Any?>()
            space()
            if (at < text.length && text[at] == '}') { at++; return out }
            while (true) {
                space()
                if (at >= text.length || text[at] != '"') throw JsonError("a key should start at offset $at")
                val key = stringValue()
                space()
                expect(':')
                space()
                if (out.containsKey(key)) throw JsonError("the key ${dev.modelcast.client.quoted(key)} appears twice")
                out[key] = value(depth + 1)
                space()
                if (at < text.length && text[at] == ',') { at++; continue }
                expect('}')
                return out
            }
        }

        private fun listValue(depth: Int): List<Any?> {
            at++
            val out = ArrayList<Any?>()
            space()
            if (at < text.length && text[at] == ']') { at++; return out }
            while (true) {
                space()
                out.add(value(depth + 1))
                space()
                if (at < text.length && text[at] == ',') { at++; continue }
                expect(']')
                return out
            }
        }

        private fun expect(char: Char) {
            if (at >= text.length || text[at] != char) throw JsonError("'$char' expected at offset $at")
            at++
        }

        private fun stringValue(): String {
            at++
            val out = StringBuilder()
            while (true) {
                if (at >= text.length) throw JsonError("a string is not closed")
                val char = text[at++]
                when {
                    char == '"' -> return out.toString()
                    char == '\\' -> {
                        if (at >= text.length) throw JsonError("a string is not closed")
                        when (val escaped = text[at++]) {
                            '"', '\\', '/' -> out.append(escaped)
                            'b' -> out.append('\b')
                            'f' -> out.append('\u000c')
                            'n' -> out.append('\n')
                            'r' -> out.append('\r')
                            't' -> out.append('\t')
                            'u' -> {
                                if (at + 4 > text.length) throw JsonError("a \\u escape is cut at offset $at")
                                val code = text.substring(at, at + 4).toIntOrNull(16) ?: throw JsonError("a bad \\u escape at offset $at")
                                out.append(code.toChar())
                                at += 4
                            }
                            else -> throw JsonError("a bad escape at offset ${at - 1}")
                        }
                    }
                    char < ' ' -> throw JsonError("a control character in a string at offset ${at - 1}")
                    else -> out.append(char)
                }
            }
        }

        private fun number(): Any {
            val start = at
            if (at < text.length && text[at] == '-') at++
            val digits = at
            while (at < text.length && text[at] in '0'..'9') at++
            if (at == digits) throw JsonError("unexpected text at offset $start")
            if (text[digits] == '0' && at - digits > 1) throw JsonError("a number with a leading zero at offset $start")
            var integral = true
            if (at < text.length && text[at] == '.') {
                integral = false
                at++
                val fraction = at
                while (at < text.length && text[at] in '0'..'9') at++
                if (at == fraction) throw JsonError("a number without digits after its point at offset $start")
            }
            if (at < text.length && (text[at] == 'e' || text[at] == 'E')) {
                integral = false
                at++
                if (at < text.length && (text[at] == '+' || text[at] == '-')) at++
                val exponent = at
                while (at < text.length && text[at] in '0'..'9') at++
                if (at == exponent) throw JsonError("a number without exponent digits at offset $start")
            }
            val literal = text.substring(start, at)
            if (integral) literal.toLongOrNull()?.let { return it }
            return literal.toDouble()
        }
    }
}

/** Text that is not the JSON expected, with where. */
internal class JsonError(message: String) : Exception(message)

/** Typed reads of a parsed object's fields: a missing field is null, a field of another type an error naming it. */
internal class JsonObject(private val fields: Map<String, Any?>, private val where: String) {
    fun string(name: String): String? = typed(name, "a string") { it as? String }
    fun long(name: String): Long? = typed(name, "an integer") { it as? Long }
    fun objectValue(name: String): JsonObject? = typed(name, "an object") { value -> asObject(value, "$where.$name") }
    fun stringList(name: String): List<String>? = typed(name, "a list of strings") { value ->
        (value as? List<*>)?.let { list -> if (list.all { it is String }) list.map { it as String } else null }
    }

    /** Each member of the object `name` (string keys), as an object. */
    fun objects(name: String): Map<String, JsonObject>? = objectValue(name)?.let { members ->
        members.keys().associateWith { key -> members.objectValue(key)!! }
    }

    fun keys(): Set<String> = fields.keys

    private fun <T> typed(name: String, what: String, cast: (Any) -> T?): T? {
        val value = fields[name] ?: return null
        return cast(value) ?: throw JsonError("$where.$name is not $what")
    }

    companion object {
        fun asObject(value: Any?, where: String): JsonObject? {
            @Suppress("UNCHECKED_CAST")
            val map = value as? Map<String, Any?> ?: return null
            return JsonObject(map, where)
        }
    }
}
