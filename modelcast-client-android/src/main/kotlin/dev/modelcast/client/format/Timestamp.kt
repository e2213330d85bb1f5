package dev.modelcast.client.format

import java.time.DateTimeException
import java.time.Instant
import java.time.LocalDateTime
import java.time.ZoneOffset
import java.time.format.DateTimeFormatter

/**
 * An RFC 3339 time as manifests write them: `2026-11-22T03:00:00Z`, optionally with
 * fractional seconds and a numeric offset (`YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`,
 * `T` and `Z` in either case, a real calendar date, no leap second), at most 64 bytes.
 * Ordered by the instant it names.
 * @throws ManifestValueException when [text] is not one.
 */
class Timestamp(text: String) : Comparable<Timestamp> {
    val text: String = text
    val instant: Instant = parse(text) ?: throw ManifestValueException("", text, "is not an RFC 3339 time")

    override fun compareTo(other: Timestamp): Int = instant.compareTo(other.instant)
    override fun equals(other: Any?): Boolean = other is Timestamp && other.instant == instant
    override fun hashCode(): Int = instant.hashCode()
    override fun toString(): String = text

    companion object {
        /** [instant] as manifests write times: UTC, whole seconds (`2026-11-22T03:00:00Z`). */
        @JvmStatic
        fun format(instant: Instant): String =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss'Z'").withZone(ZoneOffset.UTC).format(instant)

        /** The instant [text] names, or null when it is not an RFC 3339 time (the rules above). */
        @JvmStatic
        fun parse(text: String): Instant? {
            if (text.length > 64 || text.any { it >= '\u0080' }) return null
            var position = 0
            fun number(digits: Int): Int? {
                if (position + digits > text.length) return null
                var value = 0
                for (index in position until position + digits) {
                    val char = text[index]
                    if (char !in '0'..'9') return null
                    value = value * 10 + (char - '0')
                }
                position += digits
                return value
            }
            fun literal(vararg chars: Char): Boolean {
                if (position < text.length && text[position] in chars) { position++; return true }
                return false
            }
            val year = number(4) ?: return null
            if (!literal('-')) return null
            val month = number(2) ?: return null
            if (!literal('-')) return null
            val day = number(2) ?: return null
            if (!literal('T', 't')) return null
            val hour = number(2) ?: return null
            if (!literal(':')) return null
            val minute = number(2) ?: return null
            if (!literal(':')) return null
            val second = number(2) ?: return null
            var nanos = 0
            if (literal('.')) {
                val start = position
                while (position < text.length && text[position] in '0'..'9') position++
                if (position == start) return null
                // Digits past nanoseconds are dropped: no clock compares finer.
                nanos = text.substring(start, minOf(position, start + 9)).padEnd(9, '0').toInt()
            }
            val offsetSeconds = when {
                literal('Z', 'z') -> 0
                position < text.length && (text[position] == '+' || text[position] == '-') -> {
                    val sign = if (text[position] == '-') -1 else 1
                    position++
                    val hours = number(2) ?: return null
                    if (!literal(':')) return null
                    val minutes = number(2) ?: return null
                    if (hours > 23 || minutes > 59) return null
                    sign * (hours * 3600 + minutes * 60)
                }
                else -> return null
            }
            if (position != text.length || hour > 23 || minute > 59 || second > 59) return null
            return try {
                LocalDateTime.of(year, month, day, hour, minute, second, nanos).toInstant(ZoneOffset.ofTotalSeconds(offsetSeconds))
            } catch (error: DateTimeException) {
                null
            }
        }
    }
}
