package dev.modelcast.client.format

/**
 * A semantic version (semver.org 2.0.0): `MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]`, ordered
 * by semver precedence (build metadata ignored, as equality ignores it). [major], [minor]
 * and [patch] are unsigned 64-bit numbers held in a `Long` (read them with
 * `java.lang.Long.toUnsignedString`). No leading `v`: versions are shown exactly as given.
 */
class SemanticVersion private constructor(
    val text: String,
    val major: Long,
    val minor: Long,
    val patch: Long,
    /** Dot-separated pre-release identifiers (`rc.1` → `[rc, 1]`). */
    val prerelease: List<String>,
    /** Build metadata, kept for display but not for ordering. */
    val build: List<String>
) : Comparable<SemanticVersion> {

    override fun compareTo(other: SemanticVersion): Int {
        java.lang.Long.compareUnsigned(major, other.major).let { if (it != 0) return it }
        java.lang.Long.compareUnsigned(minor, other.minor).let { if (it != 0) return it }
        java.lang.Long.compareUnsigned(patch, other.patch).let { if (it != 0) return it }
        // A version without pre-release identifiers ranks above one with them.
        if (prerelease.isEmpty() || other.prerelease.isEmpty()) return other.prerelease.size.sign() - prerelease.size.sign()
        for ((x, y) in prerelease.zip(other.prerelease)) {
            if (x == y) continue
            val xNumeric = x.all { it in '0'..'9' }
            val yNumeric = y.all { it in '0'..'9' }
            return when {
                xNumeric && yNumeric -> if (x.length != y.length) x.length.compareTo(y.length) else x.compareTo(y)
                xNumeric -> -1
                yNumeric -> 1
                else -> compareBytes(x, y)
            }
        }
        return prerelease.size.compareTo(other.prerelease.size)
    }

    override fun equals(other: Any?): Boolean =
        other is SemanticVersion && major == other.major && minor == other.minor && patch == other.patch && prerelease == other.prerelease

    override fun hashCode(): Int = listOf(major, minor, patch, prerelease).hashCode()
    override fun toString(): String = text

    companion object {
        /** Parses [text]; null unless it is a semantic version. */
        @JvmStatic
        fun parse(text: String): SemanticVersion? {
            var rest = text
            var build = emptyList<String>()
            val plus = rest.indexOf('+')
            if (plus >= 0) {
                build = rest.substring(plus + 1).split(".")
                rest = rest.substring(0, plus)
                if (!build.all { it.isNotEmpty() && it.all(::isIdentifierCharacter) }) return null
            }
            var prerelease = emptyList<String>()
            val dash = rest.indexOf('-')
            if (dash >= 0) {
                prerelease = rest.substring(dash + 1).split(".")
                rest = rest.substring(0, dash)
                for (identifier in prerelease) {
                    if (identifier.isEmpty() || !identifier.all(::isIdentifierCharacter)) return null
                    if (identifier.all { it in '0'..'9' } && identifier.length > 1 && identifier.startsWith("0")) return null
                }
            }
            val core = rest.split(".")
            if (core.size != 3) return null
            val numbers = core.map { part ->
                if (part.isEmpty() || !part.all { it in '0'..'9' } || (part.length > 1 && part.startsWith("0"))) return null
                parseUnsigned(part) ?: return null
            }
            return SemanticVersion(text, numbers[0], numbers[1], numbers[2], prerelease, build)
        }

        private fun isIdentifierCharacter(char: Char) = char in '0'..'9' || char in 'A'..'Z' || char in 'a'..'z' || char == '-'
    }
}

private fun Int.sign(): Int = if (this > 0) 1 else 0

/** Byte order of UTF-8 (the same as UTF-16 order for the ASCII these identifiers are). */
internal fun compareBytes(a: String, b: String): Int {
    val x = a.toByteArray(Charsets.UTF_8)
    val y = b.toByteArray(Charsets.UTF_8)
    for (index in 0 until minOf(x.size, y.size)) {
        val difference = (x[index].toInt() and 0xFF) - (y[index].toInt() and 0xFF)
        if (difference != 0) return difference
    }
    return x.size - y.size
}

/** Decimal digits as an unsigned 64-bit value, or null past 2^64 − 1. */
internal fun parseUnsigned(digits: String): Long? =
    try { java.lang.Long.parseUnsignedLong(digits) } catch (e: NumberFormatException) { null }
