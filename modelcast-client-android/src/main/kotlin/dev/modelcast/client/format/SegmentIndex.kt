package dev.modelcast.client.format

import dev.modelcast.client.quoted

/**
 * The segment index of one artifact (docs/segment-index.md, format version 1): the file cut
 * into consecutive segments, each with its length and SHA-256, so a device holding any older
 * version copies the segments it has and fetches only the others.
 *
 * Little-endian: `MCSX`, u16 format version (1), u16 scheme length (1…64), the scheme (ASCII
 * letters, digits, `.`, `-`, `_`), u64 artifact size (below 2^63, the sum of the lengths),
 * the artifact's SHA-256, u32 segment count (at most [MAX_SEGMENTS]), then per segment u32
 * length (1…[MAX_SEGMENT_LENGTH]) and SHA-256; nothing after. Lengths and digests are held
 * in two flat arrays (an index of a million segments is two allocations, not a million).
 */
class SegmentIndex private constructor(
    /** The cutting rules the boundaries follow (`modelcast-segments-1`). */
    val scheme: String,
    val artifactSize: Long,
    val artifactSha256: Sha256Digest,
    private val lengths: IntArray,
    private val digests: ByteArray
) {
    /** One segment: its length (1…16 MiB) and the SHA-256 of its bytes. */
    data class Segment(val length: Int, val sha256: Sha256Digest)

    /** How many segments. */
    val segmentCount: Int get() = lengths.size

    /** Segment [index]. */
    fun segment(index: Int): Segment = Segment(lengths[index], digest(index))

    /** The segments in order (a view: each is made when read). */
    val segments: List<Segment> = object : AbstractList<Segment>() {
        override val size: Int get() = lengths.size
        override fun get(index: Int): Segment = segment(index)
    }

    /** Where each segment starts, in order (the first at 0). */
    val offsets: LongArray
        get() {
            val offsets = LongArray(lengths.size)
            var offset = 0L
            for (index in lengths.indices) {
                offsets[index] = offset
                offset += lengths[index]
            }
            return offsets
        }

    private fun digest(index: Int): Sha256Digest = Sha256Digest.wrap(digests.copyOfRange(index * 32, index * 32 + 32))

    /** The index's bytes, as the format lays them out. */
    fun encoded(): ByteArray {
        val scheme = scheme.toByteArray(Charsets.US_ASCII)
        val out = java.nio.ByteBuffer.allocate(4 + 2 + 2 + scheme.size + 8 + 32 + 4 + lengths.size * 36).order(java.nio.ByteOrder.LITTLE_ENDIAN)
        out.put(MAGIC).putShort(FORMAT_VERSION.toShort()).putShort(scheme.size.toShort()).put(scheme)
        out.putLong(artifactSize).put(artifactSha256.toByteArray()).putInt(lengths.size)
        for (index in lengths.indices) out.putInt(lengths[index]).put(digests, index * 32, 32)
        return out.array()
    }

    override fun equals(other: Any?): Boolean = other is SegmentIndex && other.scheme == scheme && other.artifactSize == artifactSize &&
        other.artifactSha256 == artifactSha256 && other.lengths.contentEquals(lengths) && other.digests.contentEquals(digests)

    override fun hashCode(): Int = listOf(scheme, artifactSize, artifactSha256, lengths.contentHashCode()).hashCode()
    override fun toString(): String = "SegmentIndex($scheme, $artifactSize bytes, ${lengths.size} segments)"

    companion object {
        @JvmField
        val MAGIC: ByteArray = "MCSX".toByteArray(Charsets.US_ASCII)
        const val FORMAT_VERSION: Int = 1
        /** No segment is longer than this (16 MiB). */
        const val MAX_SEGMENT_LENGTH: Int = 16 shl 20
        /** At most this many segments (an index of about 36 MiB). */
        const val MAX_SEGMENTS: Int = 1 shl 20
        const val MAX_SCHEME_LENGTH: Int = 64
        /** The largest index the format allows, in bytes: a bound to read no more than. */
        const val MAX_ENCODED_SIZE: Long = (4 + 2 + 2 + MAX_SCHEME_LENGTH + 8 + 32 + 4).toLong() + MAX_SEGMENTS.toLong() * 36

        /**
         * An index of [segments], which must tile [artifactSize] bytes.
         * @throws SegmentIndexException naming what breaks the format.
         */
        @JvmStatic
        fun of(scheme: String, artifactSize: Long, artifactSha256: Sha256Digest, segments: List<Segment>): SegmentIndex {
            val digests = ByteArray(segments.size * 32)
            segments.forEachIndexed { index, segment -> segment.sha256.toByteArray().copyInto(digests, index * 32) }
            return checked(scheme, artifactSize, artifactSha256, IntArray(segments.size) { segments[it].length }, digests)
        }

        /**
         * Reads an index, refusing anything the format does not allow. No count is trusted
         * before the bytes it promises are known to be there.
         * @throws SegmentIndexException naming the field.
         */
        @JvmStatic
        fun decode(bytes: ByteArray): SegmentIndex {
            val reader = Reader(bytes)
            if (!reader.take(4, "magic").contentEquals(MAGIC)) throw SegmentIndexException("not a segment index (no MCSX magic)")
            val version = reader.unsigned(2, "format version")
            if (version != FORMAT_VERSION.toLong()) throw SegmentIndexException("segment index format version $version is not one this reader knows (1)")
            val schemeLength = reader.unsigned(2, "scheme length").toInt()
            if (schemeLength !in 1..MAX_SCHEME_LENGTH) throw SegmentIndexException("scheme length $schemeLength is not 1...$MAX_SCHEME_LENGTH")
            val schemeBytes = reader.take(schemeLength, "scheme")
            val size = reader.unsigned(8, "artifact size")
            if (size < 0) throw SegmentIndexException("artifact size ${java.lang.Long.toUnsignedString(size)} exceeds 2^63")
            val sha256 = reader.take(32, "artifact sha256")
            val count = reader.unsigned(4, "segment count")
            if (count > MAX_SEGMENTS) throw SegmentIndexException("$count segments (at most $MAX_SEGMENTS)")
            if (count * 36 != reader.remaining.toLong()) {
                throw SegmentIndexException("$count segments need ${count * 36} bytes, but ${reader.remaining} follow the header")
            }
            val lengths = IntArray(count.toInt())
            val digests = ByteArray(count.toInt() * 32)
            for (index in lengths.indices) {
                val length = reader.unsigned(4, "length of segment $index")
                if (length !in 1..MAX_SEGMENT_LENGTH.toLong()) throw SegmentIndexException("segment $index has length $length (1...$MAX_SEGMENT_LENGTH allowed)")
                lengths[index] = length.toInt()
                reader.take(32, "sha256 of segment $index").copyInto(digests, index * 32)
            }
            // Bytes outside ASCII fail the scheme rule, so decoding them as Latin-1 loses nothing the check needs.
            return checked(String(schemeBytes, Charsets.ISO_8859_1), size, Sha256Digest.wrap(sha256), lengths, digests)
        }

        private fun checked(scheme: String, artifactSize: Long, artifactSha256: Sha256Digest, lengths: IntArray, digests: ByteArray): SegmentIndex {
            if (scheme.length !in 1..MAX_SCHEME_LENGTH || !scheme.all { it in '0'..'9' || it in 'A'..'Z' || it in 'a'..'z' || it == '.' || it == '-' || it == '_' }) {
                throw SegmentIndexException("scheme ${quoted(scheme)} is not 1...64 ASCII letters, digits, '.', '-' or '_'")
            }
            if (artifactSize < 0) throw SegmentIndexException("artifact size $artifactSize is negative")
            if (lengths.size > MAX_SEGMENTS) throw SegmentIndexException("${lengths.size} segments (at most $MAX_SEGMENTS)")
            var total = 0L
            for ((index, length) in lengths.withIndex()) {
                if (length !in 1..MAX_SEGMENT_LENGTH) throw SegmentIndexException("segment $index has length $length (1...$MAX_SEGMENT_LENGTH allowed)")
                total += length
            }
            if (total != artifactSize) throw SegmentIndexException("the segments cover $total bytes, but the artifact has $artifactSize")
            return SegmentIndex(scheme, artifactSize, artifactSha256, lengths, digests)
        }
    }

    /** Reads fields in order, each named in the error when the bytes run out. */
    private class Reader(private val bytes: ByteArray) {
        private var position = 0
        val remaining: Int get() = bytes.size - position

        fun take(count: Int, what: String): ByteArray {
            if (count > remaining) throw SegmentIndexException("the index ends inside its $what")
            position += count
            return bytes.copyOfRange(position - count, position)
        }

        /** A little-endian unsigned integer of [count] bytes (8 bytes: as a Long's bits). */
        fun unsigned(count: Int, what: String): Long {
            val field = take(count, what)
            var value = 0L
            for (index in count - 1 downTo 0) value = (value shl 8) or (field[index].toLong() and 0xFF)
            return value
        }
    }
}
