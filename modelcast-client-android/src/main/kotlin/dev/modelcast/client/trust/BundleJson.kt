package dev.modelcast.client.trust

import java.nio.ByteBuffer
import java.nio.charset.CharacterCodingException
import java.nio.charset.CodingErrorAction

// A minimal strict JSON reader for the model signature bundle, its statement and a
// manifest's inline signature member. TO BE REPLACED by dev.modelcast.client.format.Json at
// integration (written at the same time by another helper); it stays private to this
// package so the replacement touches nothing else.

/** A parsed JSON value. Object members keep their order; a repeated name is refused. */
internal sealed class JsonValue {
    object Null : JsonValue()
    class Bool(val value: Boolean) : JsonValue()
    /** A number, kept as written (nothing here computes with numbers). */
    class Number(val text: String) : JsonValue()
    class Text(val value: String) : JsonValue()
    class Array(val items: List<JsonValue>) : JsonValue()
    class Object(val members: Map<String, JsonValue>) : JsonValue()

    /** The value as a message shows it: a string quoted, containers described, scalars as written. */
    fun shown(): String = when (this) {
        is Text -> dev.modelcast.client.quoted(value)
        is Object -> "(an object)"
        is Array -> "(an array of ${items.size})"
        is Number -> text
        is Bool -> value.toString()
        Null -> "null"
    }
}

/** Why bytes are not JSON (the position is a byte offset into the UTF-8 text as decoded). */
internal class JsonSyntaxError(message: String) : Exception(message)

internal object BundleJson {
    /**
     * Refuses a document whose arrays and objects nest deeper than [limit], counting brackets
     * outside strings before anything is parsed (so a hostile document never reaches a
     * recursive parser's depth), exactly as the Swift client's `checkJSONDepth`.
     */
    fun checkDepth(data: ByteArray, limit: Int) {
        var depth = 0
        var inString = false
        var escaped = false
        for (byte in data) {
            val b = byte.toInt() and 0xff
            if (inString) {
                if (escaped) escaped = false else if (b == 0x5c) escaped = true else if (b == 0x22) inString = false
                continue
            }
            when (b) {
                0x22 -> inString = true
                0x5b, 0x7b -> {
                    depth += 1
                    if (depth > limit) throw FieldError("(document)", "", "nests arrays and objects deeper than $limit levels")
                }
                0x5d, 0x7d -> depth -= 1
            }
        }
    }

    /** Parses [data] (UTF-8, RFC 8259, nothing but whitespace around the one value). */
    fun parse(data: ByteArray): JsonValue {
        val text = try {
            Charsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT)
                .decode(ByteBuffer.wrap(data)).toString()
        } catch (error: CharacterCodingException) {
            throw JsonSyntaxError("not UTF-8")
        }
        val reader = Reader(text)
        reader.skipWhitespace()
        val value = reader.value()
        reader.skipWhitespace()
        if (reader.position != text.length) throw JsonSyntaxError("unexpected text at ${reader.position}")
        return value
    }

    private class Reader(val text: String) {
        var position = 0

        fun fail(what: String): Nothing = throw JsonSyntaxError("$what at $position")

        fun skipWhitespace() {
            while (position < text.length && text[position].let { it == ' ' || it == '\t' || it == '\n' || it == '\r' }) position++
        }

        fun value(): JsonValue {
            if (position >= text.length) fail("unexpected end")
            return when (text[position]) {
                '{' -> obj()
                '[' -> array()
                '"' -> JsonValue.Text(string())
                't' -> literal("true", JsonValue.Bool(true))
                'f' -> literal("false", JsonValue.Bool(false))
                'n' -> literal("null", JsonValue.Null)
                else -> number()
            }
        }

        fun literal(word: String, value: JsonValue): JsonValue {
            if (!text.startsWith(word, position)) fail("unexpected text")
            position += word.length
            return value
        }

        fun obj(): JsonValue.Object {
            position++  // {
            val members = LinkedHashMap<String, JsonValue>()
            skipWhitespace()
            if (position < text.length && text[position] == '}') { position++; return JsonValue.Object(members) }
            while (true) {
                skipWhitespace()
                if (position >= text.length || text[position] != '"') fail("expected a member name")
                val name = string()
                // Two parsers may keep different copies of a repeated name; refusing it leaves one reading.
                if (members.containsKey(name)) fail("repeated member name ${dev.modelcast.client.quoted(name)}")
                skipWhitespace()
                if (position >= text.length || text[position] != ':') fail("expected ':'")
                position++
                skipWhitespace()
                members[name] = value()
                skipWhitespace()
                if (position >= text.length) fail("unexpected end")
                when (text[position]) {
                    ',' -> position++
                    '}' -> { position++; return JsonValue.Object(members) }
                    else -> fail("expected ',' or '}'")
                }
            }
        }

        fun array(): JsonValue.Array {
            position++  // [
            val items = ArrayList<JsonValue>()
            skipWhitespace()
            if (position < text.length && text[position] == ']') { position++; return JsonValue.Array(items) }
            while (true) {
                skipWhitespace()
                items.add(value())
                skipWhitespace()
                if (position >= text.length) fail("unexpected end")
                when (text[position]) {
                    ',' -> position++
                    ']' -> { position++; return JsonValue.Array(items) }
                    else -> fail("expected ',' or ']'")
                }
            }
        }

        fun string(): String {
            position++  // "
            val out = StringBuilder()
            while (true) {
                if (position >= text.length) fail("unterminated string")
                val c = text[position++]
                when {
                    c == '"' -> return out.toString()
                    c < ' ' -> fail("control character in a string")
                    c == '\\' -> {
                        if (position >= text.length) fail("unterminated string")
                        when (text[position++]) {
                            '"' -> out.append('"')
                            '\\' -> out.append('\\')
                            '/' -> out.append('/')
                            'b' -> out.append('\b')
                            'f' -> out.append('\u000c')
                            'n' -> out.append('\n')
                            'r' -> out.append('\r')
                            't' -> out.append('\t')
                            'u' -> {
                                val unit = hex4()
                                if (Character.isHighSurrogate(unit)) {
                                    if (!text.startsWith("\\u", position)) fail("unpaired surrogate")
                                    position += 2
                                    val low = hex4()
                                    if (!Character.isLowSurrogate(low)) fail("unpaired surrogate")
                                    out.append(unit).append(low)
                                } else {
                                    if (Character.isLowSurrogate(unit)) fail("unpaired surrogate")
                                    out.append(unit)
                                }
                            }
                            else -> fail("invalid escape")
                        }
                    }
                    else -> out.append(c)
                }
            }
        }

        fun hex4(): Char {
            if (position + 4 > text.length) fail("truncated \\u escape")
            var value = 0
            for (index in 0 until 4) {
                val digit = Character.digit(text[position + index], 16)
                if (digit < 0 || text[position + index] > 'f') fail("invalid \\u escape")
                value = value * 16 + digit
            }
            position += 4
            return value.toChar()
        }

        fun number(): JsonValue.Number {
            val start = position
            if (text.startsWith("-", position)) position++
            when {
                text.startsWith("0", position) -> position++
                position < text.length && text[position] in '1'..'9' -> digits()
                else -> fail("unexpected text")
            }
            if (text.startsWith(".", position)) { position++; if (digits() == 0) fail("expected digits") }
            if (position < text.length && (text[position] == 'e' || text[position] == 'E')) {
                position++
                if (position < text.length && (text[position] == '+' || text[position] == '-')) position++
                if (digits() == 0) fail("expected digits")
            }
            return JsonValue.Number(text.substring(start, position))
        }

        fun digits(): Int {
            val start = position
            while (position < text.length && text[position] in '0'..'9') position++
            return position - start
        }
    }
}
