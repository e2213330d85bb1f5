package dev.modelcast.client.format

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** The strict JSON reader and the writer. */
class JsonTest {
    private fun parse(text: String) = Json.parse(text.toByteArray(Charsets.UTF_8))
    private fun parseBytes(vararg parts: Any): JsonValue = Json.parse(bytes(*parts))
    private fun bytes(vararg parts: Any): ByteArray = parts.fold(ByteArray(0)) { all, part ->
        all + when (part) {
            is String -> part.toByteArray(Charsets.UTF_8)
            is Int -> byteArrayOf(part.toByte())
            else -> error("part $part")
        }
    }

    private fun refused(text: String, reason: String) = refusedBytes(text.toByteArray(Charsets.UTF_8), reason)

    private fun refusedBytes(data: ByteArray, reason: String) {
        val error = assertThrows(JsonException::class.java, { Json.parse(data) }, String(data, Charsets.ISO_8859_1))
        assertTrue(error.reason.contains(reason), "'${error.reason}' does not say '$reason'")
    }

    @Test
    fun integersStayExact() {
        assertEquals(JsonValue.Integer(9007199254740993), parse("9007199254740993"))
        assertEquals(JsonValue.Integer(Long.MAX_VALUE), parse("9223372036854775807"))
        assertEquals(JsonValue.Integer(Long.MIN_VALUE), parse("-9223372036854775808"))
        assertEquals(JsonValue.Integer(0), parse("-0"))
        // Past 64 bits, or with a fraction or exponent: the literal is kept for the field's decoder to judge.
        assertEquals(JsonValue.Decimal("9223372036854775808"), parse("9223372036854775808"))
        assertEquals(JsonValue.Decimal("1.5"), parse("1.5"))
        assertEquals(JsonValue.Decimal("1E+2"), parse("1E+2"))
    }

    @Test
    fun exactLongTakesIntegralNumbersOnly() {
        assertEquals(1000L, JsonValue.Decimal("1000.0").toLongExact())
        assertEquals(100L, JsonValue.Decimal("1e2").toLongExact())
        assertEquals(15L, JsonValue.Decimal("1.5e1").toLongExact())
        assertEquals(0L, JsonValue.Decimal("-0.0").toLongExact())
        assertEquals(null, JsonValue.Decimal("1.5").toLongExact())
        assertEquals(null, JsonValue.Decimal("9223372036854775808").toLongExact())
        assertEquals(null, JsonValue.Decimal("1e300").toLongExact())
        assertEquals(null, JsonValue.Decimal("1e999999999999").toLongExact())
        assertEquals(null, JsonValue.Text("1").toLongExact())
        assertEquals(null, JsonValue.Decimal("1." + "0".repeat(4_000_000)).toLongExact())  // at once, not after minutes of arithmetic
    }

    @Test
    fun documentsAreReadWholeAndInOrder() {
        val value = parse(" {\"b\": [1, true, null, \"x\"], \"a\": {\"c\": -2.5e-3}}\r\n\t")
        assertEquals(listOf("b", "a"), value.members.keys.toList())
        assertEquals(JsonValue.Array(listOf(JsonValue.Integer(1), JsonValue.Bool(true), JsonValue.Null, JsonValue.Text("x"))), value("b"))
        assertEquals(JsonValue.Decimal("-2.5e-3"), value("a")("c"))
    }

    @Test
    fun stringsDecodeEscapesAndUtf8() {
        assertEquals(str("\u0000/\"\\\b\u000C\n\r\t"), parse("\"\\u0000\\/\\\"\\\\\\b\\f\\n\\r\\t\""))
        assertEquals(str("\uD83D\uDE00"), parse("\"\\ud83d\\ude00\""))
        assertEquals(str("é日\uD83D\uDE00\u007F\u2028"), parse("\"é日\uD83D\uDE00\u007F\u2028\""))
    }

    @Test
    fun aByteOrderMarkIsSkipped() {
        assertEquals(obj("a" to JsonValue.Integer(1)), parseBytes(0xEF, 0xBB, 0xBF, "{\"a\":1}"))
    }

    @Test
    fun malformedSyntaxIsRefused() {
        refused("", "empty")
        refused("  ", "empty")
        refused("{\"a\": 1,}", "where a member name was expected")
        refused("[1, 2,]", "where a value was expected")
        refused("{\"a\": 1} x", "bytes follow the value")
        refused("{\"a\" 1}", "':'")
        refused("{\"a\": 1", "ends inside an object")
        refused("[1", "ends inside an array")
        refused("\"abc", "ends inside a string")
        refused("01", "leading zero")
        refused("+1", "where a value was expected")
        refused(".5", "where a value was expected")
        refused("1.", "no digit after its '.'")
        refused("1e", "no digit in its exponent")
        refused("-", "'-' without digits")
        refused("NaN", "where a value was expected")
        refused("tru", "ends inside 'true'")
        refused("nul1", "inside 'null'")
        refused("{'a': 1}", "where a member name was expected")
        refused("[1 /* c */]", "where ',' or ']' was expected")
        refused("\"\\x\"", "unknown escape")
        refused("\"\\u12\"", "four hexadecimal digits")
        refused("\u000C{}", "where a value was expected")
    }

    @Test
    fun duplicateKeysAreRefusedNamingWhere() {
        val error = assertThrows(JsonException::class.java) { parse("{\"models\": {\"m\": {\"version\": \"1\", \"version\": \"2\"}}}") }
        assertEquals("models.m", error.path)
        assertTrue(error.reason.contains("'version' appears twice"), error.reason)
        // Equal after escapes are decoded: one key.
        assertThrows(JsonException::class.java) { parse("{\"a\": 1, \"\\u0061\": 2}") }
    }

    @Test
    fun invalidTextIsRefused() {
        refusedBytes(bytes("\"", 0xC3, 0x28, "\""), "invalid UTF-8")
        refusedBytes(bytes("\"", 0xC0, 0x80, "\""), "invalid UTF-8")  // overlong NUL
        refusedBytes(bytes("\"", 0xE0, 0x80, 0xAF, "\""), "invalid UTF-8")  // overlong '/'
        refusedBytes(bytes("\"", 0xED, 0xA0, 0x80, "\""), "invalid UTF-8")  // an encoded surrogate
        refusedBytes(bytes("\"", 0xF4, 0x90, 0x80, 0x80, "\""), "invalid UTF-8")  // above U+10FFFF
        refusedBytes(bytes("\"", 0xE6, 0x97), "invalid UTF-8")  // cut at the end
        refusedBytes(bytes("\"", 0xFF, "\""), "invalid UTF-8")
        refusedBytes(bytes(0xFF, 0xFE, "{", 0, "}", 0), "where a value was expected")  // UTF-16 is not read
        refused("\"\\ud800\"", "lone surrogate")
        refused("\"\\ud800x\"", "lone surrogate")
        refused("\"\\ud800\\u0041\"", "lone surrogate")
        refused("\"\\udc00\"", "lone surrogate")
        refused("\"a\u0001b\"", "control character (U+0001)")
        refused("\"a\nb\"", "control character (U+000A)")
    }

    @Test
    fun nestingIsBoundedBeforeItIsFollowed() {
        assertEquals(JsonValue.Array(emptyList()), Json.parse("[".repeat(64).plus("]".repeat(64)).toByteArray(), 64).let { var v = it; repeat(63) { v = v.items[0] }; v })
        refused("[".repeat(65) + "]".repeat(65), "deeper than 64 levels")
        // Far deeper than any stack would take when followed: refused at level 65, not recursed into.
        refused("[".repeat(1_000_000), "deeper than 64 levels")
        refused("{\"a\":".repeat(65) + "1" + "}".repeat(65), "deeper than 64 levels")
    }

    @Test
    fun writingGivesBackTheSameValue() {
        val value = obj("b" to JsonValue.Array(listOf(JsonValue.Integer(-1), JsonValue.Decimal("1e+300"), JsonValue.Null, JsonValue.Bool(false))),
            "a\nb" to str("\u0000\u001f\"\\é\uD83D\uDE00\u2028"), "c" to obj())
        val text = Json.write(value)
        assertEquals("{\"b\":[-1,1e+300,null,false],\"a\\nb\":\"\\u0000\\u001f\\\"\\\\é\uD83D\uDE00\u2028\",\"c\":{}}", text)
        assertEquals(value, parse(text))
        // A lone surrogate (only code can make one) is written as an escape, which reading refuses.
        assertEquals("\"\\ud800\"", Json.write(str("\uD800")))
    }
}
