package dev.modelcast.client.format

// Character rules the value types share, as the Swift client's `ManifestText` has them.

/**
 * Control (Cc), format (Cf: bidi overrides, zero-width joiners…), line and paragraph
 * separators, private-use, unassigned and surrogate code points, and every space but
 * U+0020: invisible or rendered out of order, never part of a name a person can check.
 */
internal fun isHidden(point: Int): Boolean = when (Character.getType(point)) {
    Character.CONTROL.toInt(), Character.FORMAT.toInt(), Character.LINE_SEPARATOR.toInt(), Character.PARAGRAPH_SEPARATOR.toInt(),
    Character.PRIVATE_USE.toInt(), Character.UNASSIGNED.toInt(), Character.SURROGATE.toInt() -> true
    Character.SPACE_SEPARATOR.toInt() -> point != 0x20
    else -> false
}

/** Characters that look like `/` or `\`: accepted in no path segment. */
internal val slashLookalikes: Set<Int> = setOf(0x2215, 0x2044, 0xFF0F, 0x29F8, 0xFF3C, 0x29F5, 0x29F9, 0x1735)

/** `.` and characters that look like it: a segment made only of them is refused. */
internal val dotLookalikes: Set<Int> = setOf(0x2E, 0x2024, 0xFF0E, 0x3002, 0xFE52, 0x0701, 0x0702, 0xA60E, 0x10A50, 0x2025, 0x2026)

/** The code points of [text] (a lone surrogate is one point of its own). */
internal fun codePoints(text: String): IntArray = text.codePoints().toArray()

/** Bytes [text] takes in UTF-8 (a lone surrogate counted as the 3 bytes of its escape-free form). */
internal fun utf8Length(text: String): Int {
    var count = 0
    for (point in codePoints(text)) count += when {
        point < 0x80 -> 1
        point < 0x800 -> 2
        point < 0x10000 -> 3
        else -> 4
    }
    return count
}

/**
 * [text] quoted for a message that is built into another (a field path, a rule): `'text'`
 * with every hidden character, `'` and `\` written as `\u{…}`, cut after [limit] characters.
 * (Values a `ClientError` carries as such are quoted by `dev.modelcast.client.quoted`.)
 */
internal fun quotedValue(text: String, limit: Int = 80): String {
    val out = StringBuilder("'")
    val points = codePoints(text)
    for ((count, point) in points.withIndex()) {
        if (count == limit) { out.append("…(").append(points.size).append(" characters)"); break }
        if (isHidden(point) || point == '\''.toInt() || point == '\\'.toInt()) out.append("\\u{").append(Integer.toHexString(point)).append('}')
        else out.appendCodePoint(point)
    }
    return out.append("'").toString()
}

/** A member name as a field path shows it: itself when it is a plain name (see [ModelName]), else `['quoted']`. */
internal fun fieldName(key: String): String = if (ModelName.isValid(key)) key else "[" + quotedValue(key) + "]"

/** A short printable ASCII text (a Content-Type, a profile name): 1 to [limit] bytes 0x20–0x7E. */
internal fun checkPrintable(text: String, limit: Int, what: String) {
    if (text.isEmpty() || text.length > limit || text.any { it < ' ' || it > '~' }) {
        throw ManifestValueException("", text, "is not $what (printable ASCII, 1 to $limit characters)")
    }
}

/** `U+202E`: a code point as a rule names it. */
internal fun unicodeName(point: Int): String = String.format(java.util.Locale.ROOT, "U+%X", point)

/**
 * [text] in lower case as the Swift client's `lowercased()` makes it: each code point by
 * its full Unicode mapping, without context (`İ` → `i̇`, every `Σ` → `σ`). Through Java's
 * own method: Kotlin's `toLowerCase(Locale)` is an error from Kotlin 2.1 and `lowercase()`
 * does not exist in 1.3, and the library compiles with both.
 */
@Suppress("PLATFORM_CLASS_MAPPED_TO_KOTLIN")
internal fun lowercased(text: String): String {
    val out = StringBuilder(text.length)
    for (point in codePoints(text)) out.append((String(Character.toChars(point)) as java.lang.String).toLowerCase(java.util.Locale.ROOT))
    return out.toString()
}
