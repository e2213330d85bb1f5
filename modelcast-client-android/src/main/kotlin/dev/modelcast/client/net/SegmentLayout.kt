package dev.modelcast.client.net

import dev.modelcast.client.ClientError
import java.security.MessageDigest

/** One segment of an artifact, as its (decoded, proven) segment index lists it. */
class Segment(val offset: Long, val length: Int, sha256: String) {
    /** The segment's SHA-256, lowercase hex. */
    val sha256: String = sha256
    internal val digest: ByteArray

    init {
        if (!isSha256Hex(sha256)) throw ClientError.Configuration("segment at $offset: sha256 ${dev.modelcast.client.quoted(sha256)} is not 64 lowercase hexadecimal digits")
        digest = unhex(sha256)
    }

    /** The offset just past the segment. */
    val end: Long get() = offset + length

    override fun toString(): String = "segment $offset+$length $sha256"
}

/**
 * Where each segment of an index lives in its file, and the operations a segmented build
 * does segment by segment: prove, copy, find what a crashed build left in place, hash the
 * whole. Built from plain values (the index's decoding is not this package's): the segments
 * must tile the artifact, each 1 to 16 MiB long.
 *
 * @property artifactSize the artifact's size (the sum of the segment lengths).
 * @property artifactSha256 the artifact's SHA-256, lowercase hex.
 */
class SegmentLayout(segments: List<Segment>, val artifactSize: Long, val artifactSha256: String) {
    val segments: List<Segment> = ArrayList(segments)
    /** Segment number by start offset. */
    private val numbers = HashMap<Long, Int>()

    init {
        if (!isSha256Hex(artifactSha256)) throw ClientError.Configuration("artifactSha256 ${dev.modelcast.client.quoted(artifactSha256)} is not 64 lowercase hexadecimal digits")
        var offset = 0L
        for ((number, segment) in this.segments.withIndex()) {
            if (segment.offset != offset) throw ClientError.Configuration("segment $number starts at ${segment.offset}, not at $offset where the one before it ends")
            if (segment.length < 1 || segment.length > MAX_SEGMENT_LENGTH) throw ClientError.Configuration("segment $number is ${segment.length} bytes long (1 to $MAX_SEGMENT_LENGTH)")
            numbers[offset] = number
            offset += segment.length
        }
        if (offset != artifactSize) throw ClientError.Configuration("the segments cover $offset bytes, not the artifact's $artifactSize")
    }

    /** The offset just past segment `number`. */
    fun end(number: Int): Long = segments[number].end

    /** The number of the segment starting at `offset`, if one does. */
    fun segmentAt(offset: Long): Int? = numbers[offset]

    /** True when `count` bytes of `bytes` from `from` are segment `number`'s. */
    fun proves(bytes: ByteArray, number: Int, from: Int = 0, count: Int = bytes.size - from, digest: MessageDigest = sha256()): Boolean {
        val segment = segments[number]
        if (count != segment.length) return false
        digest.reset()
        digest.update(bytes, from, count)
        return MessageDigest.isEqual(digest.digest(), segment.digest)
    }

    /**
     * The segments a crashed build already wrote to `part`: only a part of the artifact's
     * size can hold them, and each one counts only if its bytes hash right.
     */
    fun segmentsInPlace(part: PositionalFile): Set<Int> {
        if (part.size() != artifactSize) return emptySet()
        val kept = HashSet<Int>()
        val buffer = ByteArray(segments.fold(0) { longest, segment -> Math.max(longest, segment.length) })
        val digest = sha256()
        for ((number, segment) in segments.withIndex()) {
            val got = part.readInto(buffer, segment.length, segment.offset)
            if (got == segment.length && proves(buffer, number, 0, got, digest)) kept.add(number)
        }
        return kept
    }

    /**
     * Copies the segments starting at `offset` (in the new file) and covering `length` bytes
     * from `source` in the old artifact, each proven before it is written; segments in
     * `skipping` are already in place.
     */
    fun copy(input: SeedBytes, source: Long, output: PositionalFile, offset: Long, length: Long, skipping: Set<Int>) {
        var number = segmentAt(offset) ?: throw ClientError.Io(output.path, "no segment starts at $offset")
        var done = 0L
        val digest = sha256()
        while (done < length) {
            val segment = segments[number]
            if (number !in skipping) {
                val bytes = input.read(segment.length, source + done)
                if (bytes.size != segment.length) throw ClientError.Io(input.path, "the installed file ended inside segment $number")
                if (!proves(bytes, number, digest = digest)) {
                    throw ClientError.Io(input.path, "the installed file's bytes for segment $number do not hash to the index's value")
                }
                output.write(bytes, segment.offset)
            }
            done += segment.length
            number += 1
        }
    }

    /** The parts of segments `first until end` not already in place, as runs of consecutive segments. */
    fun missing(first: Int, end: Int, kept: Set<Int>): List<IntRange> {
        val runs = ArrayList<IntRange>()
        var start = -1
        for (number in first until end) {
            if (number in kept) {
                if (start >= 0) runs.add(start until number)
                start = -1
            } else if (start < 0) {
                start = number
            }
        }
        if (start >= 0) runs.add(start until end)
        return runs
    }

    /** The SHA-256 of the whole file as built, lowercase hex. */
    fun digest(file: PositionalFile): String {
        val whole = sha256()
        val buffer = ByteArray(READ_SIZE)
        var offset = 0L
        while (offset < artifactSize) {
            val count = Math.min(READ_SIZE.toLong(), artifactSize - offset).toInt()
            val got = file.readInto(buffer, count, offset)
            if (got != count) throw ClientError.Io(file.path, "the built file is shorter than $artifactSize bytes")
            whole.update(buffer, 0, count)
            offset += count
        }
        return hex(whole.digest())
    }

    companion object {
        /** The longest segment the index format allows. */
        const val MAX_SEGMENT_LENGTH = 16 shl 20
        /** The size of the reads that hash the whole file. */
        const val READ_SIZE = 1 shl 20
    }
}
