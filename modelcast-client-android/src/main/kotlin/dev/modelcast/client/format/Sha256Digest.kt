package dev.modelcast.client.format

import java.security.MessageDigest

/**
 * 32 bytes of SHA-256, compared by content (a `ByteArray` is not): a segment's or an
 * artifact's digest in a [SegmentIndex]. Immutable: the
 * bytes are copied in and out.
 */
class Sha256Digest private constructor(private val bytes: ByteArray) {
    /** A copy of the 32 bytes. */
    fun toByteArray(): ByteArray = bytes.copyOf()

    /** 64 lowercase hexadecimal digits. */
    val hex: String get() = bytes.joinToString("") { String.format(java.util.Locale.ROOT, "%02x", it.toInt() and 0xFF) }

    /** The digest as a manifest writes it. */
    fun toSha256Hex(): Sha256Hex = Sha256Hex(hex)

    override fun equals(other: Any?): Boolean = other is Sha256Digest && other.bytes.contentEquals(bytes)
    override fun hashCode(): Int = bytes.contentHashCode()
    override fun toString(): String = hex

    companion object {
        /** The digest in [bytes], which must be 32 long. */
        @JvmStatic
        fun of(bytes: ByteArray): Sha256Digest {
            require(bytes.size == 32) { "a SHA-256 digest has 32 bytes, not ${bytes.size}" }
            return Sha256Digest(bytes.copyOf())
        }

        /** SHA-256 of [data] (java.security, which Android has). */
        @JvmStatic
        @JvmOverloads
        fun hash(data: ByteArray, offset: Int = 0, length: Int = data.size - offset): Sha256Digest {
            val digest = MessageDigest.getInstance("SHA-256")
            digest.update(data, offset, length)
            return Sha256Digest(digest.digest())
        }

        internal fun fromHex(hex: String): Sha256Digest =
            Sha256Digest(ByteArray(32) { ((Character.digit(hex[2 * it], 16) shl 4) or Character.digit(hex[2 * it + 1], 16)).toByte() })

        /** Wraps 32 bytes this package just read or computed, without a copy. */
        internal fun wrap(bytes: ByteArray): Sha256Digest = Sha256Digest(bytes)
    }
}
