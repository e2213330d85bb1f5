package dev.modelcast.client.format

import java.text.Normalizer

/**
 * One component of a relative path: a file or directory name a device creates. Not empty,
 * at most 255 UTF-8 bytes, not `.` or `..` (nor made only of dots or dot look-alikes), no
 * `/` or `\` (nor their look-alikes), no control, format or invisible character, in Unicode
 * normal form C (so one name has one spelling on every file system).
 * @throws ManifestValueException when [text] breaks a rule.
 */
class PathSegment(text: String) {
    val text: String = check(text)

    override fun equals(other: Any?): Boolean = other is PathSegment && other.text == text
    override fun hashCode(): Int = text.hashCode()
    override fun toString(): String = text

    private companion object {
        fun check(text: String): String {
            fun refuse(rule: String): Nothing = throw ManifestValueException("", text, rule)
            if (text.isEmpty()) refuse("is empty (a file or directory name is needed)")
            val bytes = utf8Length(text)
            if (bytes > 255) refuse("is longer than 255 bytes ($bytes)")
            val points = codePoints(text)
            if (points.all { it in dotLookalikes }) refuse("is made only of dots (it would name a directory above)")
            for (point in points) {
                if (point == '/'.toInt() || point == '\\'.toInt() || point in slashLookalikes) {
                    refuse("contains a path separator or a character that looks like one (${unicodeName(point)})")
                }
                if (isHidden(point)) refuse("contains a control or invisible character (${unicodeName(point)})")
            }
            // Compared code unit by code unit: two spellings of one name must not both be accepted.
            if (Normalizer.normalize(text, Normalizer.Form.NFC) != text) refuse("is not in Unicode normal form C (two spellings of one name)")
            return text
        }
    }
}
