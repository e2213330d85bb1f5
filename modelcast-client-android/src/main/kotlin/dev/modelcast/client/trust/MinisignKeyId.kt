package dev.modelcast.client.trust

import java.util.Locale

/**
 * The 8-byte key identifier minisign stores in every key and signature.
 *
 * minisign prints it as the 8 bytes read as a little-endian 64-bit integer in upper-case
 * hex without leading zeros (`%lX`), so the printed form is the stored bytes reversed:
 * bytes `05 bd 9d 25 3f 30 78 d2` print as `D278303F259DBD05`, and one id in sixteen prints
 * shorter than 16 digits.
 */
class MinisignKeyId private constructor(private val stored: ByteArray) {
    /** The 8 bytes as stored in key and signature files (a copy). */
    val bytes: ByteArray get() = stored.copyOf()

    /** The stored bytes read as a little-endian integer (as an unsigned 64-bit value in a Long). */
    val value: Long
        get() {
            var result = 0L
            for (index in 7 downTo 0) result = (result shl 8) or (stored[index].toLong() and 0xff)
            return result
        }

    /** The form minisign prints: upper-case hex, no leading zeros. */
    val hex: String get() = String.format(Locale.ROOT, "%X", value)  // %X prints a negative Long as unsigned

    override fun toString(): String = hex
    override fun equals(other: Any?): Boolean = other is MinisignKeyId && other.stored.contentEquals(stored)
    override fun hashCode(): Int = stored.contentHashCode()

    companion object {
        /** The id stored as [bytes]; null for any length but 8. */
        fun of(bytes: ByteArray): MinisignKeyId? = if (bytes.size == 8) MinisignKeyId(bytes.copyOf()) else null

        /** The id printed as [hex]: 1 to 16 hex digits, either case, as minisign shows it; else null. */
        fun parse(hex: String): MinisignKeyId? {
            if (hex.length !in 1..16) return null
            var value = 0L
            for (c in hex) {
                val nibble = when (c) {
                    in '0'..'9' -> c - '0'
                    in 'a'..'f' -> c - 'a' + 10
                    in 'A'..'F' -> c - 'A' + 10
                    else -> return null
                }
                value = (value shl 4) or nibble.toLong()
            }
            return MinisignKeyId(ByteArray(8) { (value ushr (8 * it)).toByte() })
        }
    }
}
