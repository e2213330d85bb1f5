package dev.modelcast.client.format

import java.math.BigInteger

/**
 * A version as apps write theirs (`min_app_version`, a platform's lowest OS version): one
 * to four numbers (`5`, `5.2`, `1.4.0`, `1.0.0.123`), optionally a semver pre-release
 * (`2.0.0-beta.1`); anything after `+` is ignored. Missing numbers count as 0 (`5.2` =
 * `5.2.0`); a pre-release ranks below its release. Equal when neither ranks above the other.
 * @throws ManifestValueException when [text] is not one.
 */
class AppVersion(text: String) : Comparable<AppVersion> {
    val text: String = text
    /** The numbers as written (each at most 18 digits). */
    val numbers: List<Long>
    /** The pre-release identifiers (`beta.1` → `[beta, 1]`), empty for a release. */
    val prerelease: List<String>

    init {
        fun refuse(): Nothing = throw ManifestValueException("", text,
            "is not an app version (one to four numbers separated by dots, e.g. 5.2, 1.4.0 or 1.0.0.123)")
        if (utf8Length(text) > 64) refuse()
        var core = text
        val plus = core.indexOf('+')
        if (plus >= 0) core = core.substring(0, plus)
        var pre = emptyList<String>()
        val dash = core.indexOf('-')
        if (dash >= 0) {
            pre = core.substring(dash + 1).split(".")
            core = core.substring(0, dash)
            if (!pre.all { part -> part.isNotEmpty() && part.all { it in '0'..'9' || it in 'A'..'Z' || it in 'a'..'z' || it == '-' } }) refuse()
        }
        val parts = core.split(".")
        if (parts.size !in 1..4) refuse()
        numbers = parts.map { part ->
            if (part.isEmpty() || part.length > 18 || !part.all { it in '0'..'9' }) refuse()
            part.toLong()
        }
        prerelease = pre
    }

    override fun compareTo(other: AppVersion): Int {
        for (index in 0 until maxOf(numbers.size, other.numbers.size)) {
            val x = numbers.getOrElse(index) { 0L }
            val y = other.numbers.getOrElse(index) { 0L }
            if (x != y) return x.compareTo(y)
        }
        if (prerelease.isEmpty() || other.prerelease.isEmpty()) {
            return (if (prerelease.isEmpty()) 0 else -1) + (if (other.prerelease.isEmpty()) 0 else 1)
        }
        // Semver's pre-release order: numeric identifiers numerically, below alphanumeric ones.
        for ((x, y) in prerelease.zip(other.prerelease)) {
            if (x == y) continue
            val m = unsigned(x)
            val n = unsigned(y)
            return when {
                m != null && n != null -> m.compareTo(n)
                m != null -> -1
                n != null -> 1
                else -> compareBytes(x, y)
            }
        }
        return prerelease.size.compareTo(other.prerelease.size)
    }

    override fun equals(other: Any?): Boolean = other is AppVersion && compareTo(other) == 0
    /** The numbers without trailing zeros: equal versions (`5.2`, `5.2.0`) hash alike. */
    override fun hashCode(): Int = numbers.dropLastWhile { it == 0L }.hashCode()
    override fun toString(): String = text

    private companion object {
        val maxUnsigned: BigInteger = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE)

        /**
         * An identifier's value as the Swift client reads it (`UInt64(text)`): digits with an
         * optional sign, within 64 bits unsigned (`-0` is 0), else null (compared as text).
         */
        fun unsigned(text: String): BigInteger? {
            val negative = text.startsWith("-")
            val digits = if (negative || text.startsWith("+")) text.substring(1) else text
            if (digits.isEmpty() || !digits.all { it in '0'..'9' }) return null
            val value = BigInteger(digits)
            if (value > maxUnsigned || (negative && value.signum() != 0)) return null
            return value
        }
    }
}
