package dev.modelcast.client.format

/**
 * The strict reader behind [Json.parse]: RFC 8259 and nothing more. No trailing commas,
 * comments, NaN, leading zeros or duplicate keys; strings must be valid UTF-8 with no raw
 * control characters and no lone surrogate escapes. Nesting is counted as it is entered,
 * so a document deeper than [maxDepth] is refused before the recursion goes past it.
 */
internal class JsonReader(private val bytes: ByteArray, private val maxDepth: Int) {
    private var position = 0
    private var depth = 0
    /** The keys and indices being read, for errors: `models.m.files[0]`. */
    private val path = ArrayList<Any>()

    fun document(): JsonValue {
        // A UTF-8 byte order mark is tolerated (the Swift client's decoder skips it too).
        if (bytes.size >= 3 && bytes[0] == 0xEF.toByte() && bytes[1] == 0xBB.toByte() && bytes[2] == 0xBF.toByte()) position = 3
        skipWhitespace()
        if (position == bytes.size) throw fail("the document is empty")
        val value = value()
        skipWhitespace()
        if (position != bytes.size) throw fail("bytes follow the value (${describe(bytes[position])})")
        return value
    }

    private fun value(): JsonValue {
        if (position == bytes.size) throw fail("the document ends where a value was expected")
        return when (bytes[position].toInt().toChar()) {
            '{' -> obj()
            '[' -> array()
            '"' -> JsonValue.Text(string())
            't' -> literal("true", JsonValue.Bool(true))
            'f' -> literal("false", JsonValue.Bool(false))
            'n' -> literal("null", JsonValue.Null)
            '-', in '0'..'9' -> number()
            else -> throw fail("${describe(bytes[position])} where a value was expected")
        }
    }

    private fun enter() {
        depth++
        if (depth > maxDepth) throw JsonException(position.toLong(), renderPath(path), "nests arrays and objects deeper than $maxDepth levels", tooDeep = true)
    }

    private fun obj(): JsonValue {
        enter()
        position++
        val members = LinkedHashMap<String, JsonValue>()
        skipWhitespace()
        if (peek() == '}'.toInt()) { position++; depth--; return JsonValue.Object(members) }
        while (true) {
            skipWhitespace()
            if (peek() != '"'.toInt()) throw fail(if (position == bytes.size) "the document ends inside an object" else "${describe(bytes[position])} where a member name was expected")
            val keyOffset = position
            val key = string()
            if (members.containsKey(key)) {
                // Readers disagree on which of two equal keys wins; refusing is the one answer all can give.
                position = keyOffset
                throw JsonException(position.toLong(), renderPath(path), "the member ${quotedValue(key)} appears twice", duplicateKey = key)
            }
            skipWhitespace()
            expect(':', "':' after a member name")
            skipWhitespace()
            path.add(key)
            members[key] = value()
            path.removeAt(path.size - 1)
            skipWhitespace()
            when (peek()) {
                ','.toInt() -> position++
                '}'.toInt() -> { position++; depth--; return JsonValue.Object(members) }
                -1 -> throw fail("the document ends inside an object")
                else -> throw fail("${describe(bytes[position])} where ',' or '}' was expected")
            }
        }
    }

    private fun array(): JsonValue {
        enter()
        position++
        val items = ArrayList<JsonValue>()
        skipWhitespace()
        if (peek() == ']'.toInt()) { position++; depth--; return JsonValue.Array(items) }
        while (true) {
            skipWhitespace()
            path.add(items.size)
            items.add(value())
            path.removeAt(path.size - 1)
            skipWhitespace()
            when (peek()) {
                ','.toInt() -> position++
                ']'.toInt() -> { position++; depth--; return JsonValue.Array(items) }
                -1 -> throw fail("the document ends inside an array")
                else -> throw fail("${describe(bytes[position])} where ',' or ']' was expected")
            }
        }
    }

    private fun literal(word: String, value: JsonValue): JsonValue {
        for (char in word) {
            if (peek() != char.toInt()) throw fail(if (position == bytes.size) "the document ends inside '$word'" else "${describe(bytes[position])} inside '$word'")
            position++
        }
        return value
    }

    private fun number(): JsonValue {
        val start = position
        var integral = true
        if (peek() == '-'.toInt()) position++
        when {
            peek() == '0'.toInt() -> {
                position++
                if (peek() in '0'.toInt()..'9'.toInt()) throw fail("a number with a leading zero")
            }
            peek() in '1'.toInt()..'9'.toInt() -> digits()
            else -> throw fail("a '-' without digits")
        }
        if (peek() == '.'.toInt()) {
            integral = false
            position++
            if (peek() !in '0'.toInt()..'9'.toInt()) throw fail("a number with no digit after its '.'")
            digits()
        }
        if (peek() == 'e'.toInt() || peek() == 'E'.toInt()) {
            integral = false
            position++
            if (peek() == '+'.toInt() || peek() == '-'.toInt()) position++
            if (peek() !in '0'.toInt()..'9'.toInt()) throw fail("a number with no digit in its exponent")
            digits()
        }
        val text = String(bytes, start, position - start, Charsets.US_ASCII)
        if (integral) text.toLongOrNull()?.let { return JsonValue.Integer(it) }
        return JsonValue.Decimal(text)
    }

    private fun digits() {
        while (peek() in '0'.toInt()..'9'.toInt()) position++
    }

    /** A string starting at the quote under [position], decoded and checked. */
    private fun string(): String {
        position++
        val out = StringBuilder()
        while (true) {
            if (position == bytes.size) throw fail("the document ends inside a string")
            val byte = bytes[position].toInt() and 0xFF
            when {
                byte == '"'.toInt() -> { position++; return out.toString() }
                byte == '\\'.toInt() -> escape(out)
                byte < 0x20 -> throw fail("a control character (U+${hex4(byte)}) inside a string, not escaped")
                byte < 0x80 -> { out.append(byte.toChar()); position++ }
                else -> out.appendCodePoint(utf8())
            }
        }
    }

    private fun escape(out: StringBuilder) {
        position++
        val char = peek()
        position++
        when (char) {
            '"'.toInt() -> out.append('"')
            '\\'.toInt() -> out.append('\\')
            '/'.toInt() -> out.append('/')
            'b'.toInt() -> out.append('\b')
            'f'.toInt() -> out.append('\u000C')
            'n'.toInt() -> out.append('\n')
            'r'.toInt() -> out.append('\r')
            't'.toInt() -> out.append('\t')
            'u'.toInt() -> {
                val unit = hexUnit()
                when (unit) {
                    in 0xD800..0xDBFF -> {
                        if (peek() != '\\'.toInt() || peekAt(1) != 'u'.toInt()) throw fail("a lone surrogate \\u${hex4(unit)} (no low surrogate after it)")
                        position += 2
                        val low = hexUnit()
                        if (low !in 0xDC00..0xDFFF) throw fail("a lone surrogate \\u${hex4(unit)} (followed by \\u${hex4(low)})")
                        out.append(unit.toChar()).append(low.toChar())
                    }
                    in 0xDC00..0xDFFF -> throw fail("a lone surrogate \\u${hex4(unit)} (no high surrogate before it)")
                    else -> out.append(unit.toChar())
                }
            }
            -1 -> throw fail("the document ends inside an escape")
            else -> { position--; throw fail("an unknown escape \\${describe(bytes[position])}") }
        }
    }

    private fun hexUnit(): Int {
        var value = 0
        repeat(4) {
            val digit = Character.digit(peek(), 16)
            if (peek() == -1 || peek() >= 0x80 || digit < 0) throw fail("a \\u escape without four hexadecimal digits")
            value = value * 16 + digit
            position++
        }
        return value
    }

    /** One multi-byte UTF-8 sequence, strictly: no overlong form, no surrogate, nothing above U+10FFFF. */
    private fun utf8(): Int {
        val lead = bytes[position].toInt() and 0xFF
        val (count, low, high) = when (lead) {
            in 0xC2..0xDF -> Triple(1, 0x80, 0xBF)
            0xE0 -> Triple(2, 0xA0, 0xBF)
            in 0xE1..0xEC, 0xEE, 0xEF -> Triple(2, 0x80, 0xBF)
            0xED -> Triple(2, 0x80, 0x9F)
            0xF0 -> Triple(3, 0x90, 0xBF)
            in 0xF1..0xF3 -> Triple(3, 0x80, 0xBF)
            0xF4 -> Triple(3, 0x80, 0x8F)
            else -> throw fail("invalid UTF-8 (byte 0x${Integer.toHexString(lead)})")
        }
        var point = lead and (0x3F shr count)
        for (index in 1..count) {
            val next = peekAt(index)
            val range = if (index == 1) low..high else 0x80..0xBF
            if (next !in range) throw fail("invalid UTF-8 (a sequence starting 0x${Integer.toHexString(lead)} is cut or malformed)")
            point = (point shl 6) or (next and 0x3F)
        }
        position += count + 1
        return point
    }

    private fun expect(char: Char, what: String) {
        if (peek() != char.toInt()) throw fail(if (position == bytes.size) "the document ends where $what was expected" else "${describe(bytes[position])} where $what was expected")
        position++
    }

    private fun skipWhitespace() {
        while (position < bytes.size) {
            when (bytes[position].toInt()) {
                0x20, 0x09, 0x0A, 0x0D -> position++
                else -> return
            }
        }
    }

    private fun peek(): Int = if (position < bytes.size) bytes[position].toInt() and 0xFF else -1
    private fun peekAt(ahead: Int): Int = if (position + ahead < bytes.size) bytes[position + ahead].toInt() and 0xFF else -1

    private fun describe(byte: Byte): String {
        val value = byte.toInt() and 0xFF
        return if (value in 0x21..0x7E) "'${value.toChar()}'" else "byte 0x${Integer.toHexString(value)}"
    }

    private fun hex4(value: Int): String = String.format(java.util.Locale.ROOT, "%04X", value)

    private fun fail(reason: String): JsonException = JsonException(position.toLong(), renderPath(path), reason)

    companion object {
        /** A path as errors name it: keys joined by `.`, indices in brackets, odd keys quoted. */
        fun renderPath(path: List<Any>): String {
            val out = StringBuilder()
            for (component in path) {
                if (component is Int) out.append('[').append(component).append(']')
                else {
                    if (out.isNotEmpty()) out.append('.')
                    out.append(fieldName(component as String))
                }
            }
            return out.toString()
        }
    }
}
