package dev.modelcast.client.format

/**
 * A byte count a manifest states: 0 to 2^53 (exact in JSON and in a double, and a sum of
 * a few thousand never overflows 64 bits).
 * @throws ManifestValueException when [bytes] is outside that range.
 */
class ByteSize(bytes: Long) : Comparable<ByteSize> {
    val bytes: Long = bytes.also {
        if (it < 0 || it > MAXIMUM) throw ManifestValueException("", it.toString(), "is not a size from 0 to 2^53 bytes")
    }

    override fun compareTo(other: ByteSize): Int = bytes.compareTo(other.bytes)
    override fun equals(other: Any?): Boolean = other is ByteSize && other.bytes == bytes
    override fun hashCode(): Int = bytes.hashCode()
    override fun toString(): String = bytes.toString()

    companion object {
        /** 2^53. */
        const val MAXIMUM: Long = 1L shl 53
    }
}
