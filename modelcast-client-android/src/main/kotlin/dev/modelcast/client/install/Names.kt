package dev.modelcast.client.install

import java.nio.file.Path
import java.text.Normalizer

/**
 * The rules a name must meet before the client builds a path from it, the same as the
 * format's `PathSegment`, `RelativePath` and `ModelName` (checked again here, where the
 * paths are made: the installer takes plain strings). Each function returns why a value is
 * refused, or null when it is fine.
 */
internal object Names {
    private val SLASH_LOOKALIKES = setOf(0x2215, 0x2044, 0xFF0F, 0x29F8, 0xFF3C, 0x29F5, 0x29F9, 0x1735)
    private val DOT_LOOKALIKES = setOf(0x2E, 0x2024, 0xFF0E, 0x3002, 0xFE52, 0x0701, 0x0702, 0xA60E, 0x10A50, 0x2025, 0x2026)

    /** A model name: letters, digits, '.', '_' and '-', at most 128, not '.' or '..'. */
    fun modelNameProblem(text: String): String? {
        val fine = text.isNotEmpty() && text.length <= 128 && text != "." && text != ".." &&
            text.all { it in 'a'..'z' || it in 'A'..'Z' || it in '0'..'9' || it == '.' || it == '_' || it == '-' }
        return if (fine) null else "is not a model name (letters, digits, '.', '_' and '-', at most 128, not '.' or '..')"
    }

    /** A version as a directory name: what a semantic version is made of (letters, digits, '.', '-', '+'), at most 128, starting with a digit. */
    fun versionProblem(text: String): String? {
        val fine = text.isNotEmpty() && text.length <= 128 && text[0] in '0'..'9' &&
            text.all { it in 'a'..'z' || it in 'A'..'Z' || it in '0'..'9' || it == '.' || it == '-' || it == '+' }
        return if (fine) null else "is not a semantic version (MAJOR.MINOR.PATCH, at most 128 characters)"
    }

    /** One file or directory name: not empty, at most 255 UTF-8 bytes, not dots only, no separator (or look-alike), nothing invisible, NFC. */
    fun segmentProblem(text: String): String? {
        if (text.isEmpty()) return "is empty (a file or directory name is needed)"
        val bytes = text.toByteArray(Charsets.UTF_8).size
        if (bytes > 255) return "is longer than 255 bytes ($bytes)"
        var index = 0
        var onlyDots = true
        while (index < text.length) {
            val point = text.codePointAt(index)
            index += Character.charCount(point)
            if (point !in DOT_LOOKALIKES) onlyDots = false
            if (point == '/'.toInt() || point == '\\'.toInt() || point in SLASH_LOOKALIKES) {
                return "contains a path separator or a character that looks like one (U+${String.format("%X", point)})"
            }
            if (hidden(point)) return "contains a control or invisible character (U+${String.format("%X", point)})"
        }
        if (onlyDots) return "is made only of dots (it would name a directory above)"
        if (Normalizer.normalize(text, Normalizer.Form.NFC) != text) return "is not in Unicode normal form C (two spellings of one name)"
        return null
    }

    /** A relative '/'-separated path: at most 1024 bytes, not absolute, each segment a [segmentProblem]-free name. */
    fun relativePathProblem(text: String): String? {
        val bytes = text.toByteArray(Charsets.UTF_8).size
        if (bytes > 1024) return "is longer than 1024 bytes ($bytes)"
        if (text.startsWith("/")) return "is an absolute path (a relative one is needed)"
        for (part in text.split('/')) {
            val problem = segmentProblem(part) ?: continue
            return "has a segment ${dev.modelcast.client.quoted(part)} that $problem"
        }
        return null
    }

    /** `base` with each segment of the checked relative `path` appended: always inside `base`. */
    fun appended(base: Path, path: String): Path = path.split('/').fold(base) { at, segment -> at.resolve(segment) }

    /** `text` lowered code point by code point (no locale): to compare names as a case-insensitive file system would. */
    fun foldCase(text: String): String {
        val out = StringBuilder(text.length)
        var index = 0
        while (index < text.length) {
            val point = text.codePointAt(index)
            index += Character.charCount(point)
            out.appendCodePoint(Character.toLowerCase(point))
        }
        return out.toString()
    }

    /** Control, format, separators other than the space, private-use, unassigned and surrogate code points. */
    private fun hidden(point: Int): Boolean {
        return when (Character.getType(point).toByte()) {
            Character.CONTROL, Character.FORMAT, Character.LINE_SEPARATOR, Character.PARAGRAPH_SEPARATOR,
            Character.PRIVATE_USE, Character.UNASSIGNED, Character.SURROGATE -> true
            Character.SPACE_SEPARATOR -> point != ' '.toInt()
            else -> false
        }
    }
}
