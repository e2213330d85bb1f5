package dev.modelcast.client.format

/**
 * How to build a new version of an artifact from bytes a device already holds: each segment
 * of the new index whose SHA-256 the old file has is copied from it, the others fetched,
 * consecutive ones in one single-range request (docs/segment-index.md, "How a client uses it").
 */
class DeltaPlan(
    /** The new file's index. */
    new: SegmentIndex,
    /**
     * Where each segment the device holds starts in the old file, by SHA-256: each proven by
     * hashing the old file's bytes, never taken from a server ([offsets] of a proven index).
     */
    have: Map<Sha256Digest, Long>
) {
    /** One step, in the new file's order. */
    sealed class Step {
        /** Copy [length] bytes at [source] in the old file to [offset] in the new one. */
        data class Copy(val source: Long, val offset: Long, val length: Long) : Step()

        /** Fetch bytes `offset until offset + length` of the new file in one request: the new index's [segments] (each hashed as it lands). */
        data class Fetch(val offset: Long, val length: Long, val segments: IntRange) : Step()
    }

    val steps: List<Step>
    /** The new artifact's size. */
    val size: Long = new.artifactSize

    init {
        val steps = ArrayList<Step>()
        var offset = 0L
        for (index in 0 until new.segmentCount) {
            val segment = new.segment(index)
            val length = segment.length.toLong()
            val source = have[segment.sha256]
            val last = steps.lastOrNull()
            when {
                source != null && last is Step.Copy && last.source + last.length == source ->
                    steps[steps.size - 1] = last.copy(length = last.length + length)
                source != null -> steps.add(Step.Copy(source, offset, length))
                last is Step.Fetch -> steps[steps.size - 1] = Step.Fetch(last.offset, last.length + length, last.segments.first..index)
                else -> steps.add(Step.Fetch(offset, length, index..index))
            }
            offset += length
        }
        this.steps = steps
    }

    /** Bytes to download. */
    val fetchedBytes: Long get() = steps.filterIsInstance<Step.Fetch>().map { it.length }.sum()

    /** Bytes copied from the old file. */
    val copiedBytes: Long get() = size - fetchedBytes

    /** Range requests the plan makes. */
    val requests: Int get() = steps.count { it is Step.Fetch }

    /** True when the plan fetches more than [FALLBACK_SHARE] of the file: one plain download is then cheaper. */
    val prefersFullDownload: Boolean get() = size > 0 && fetchedBytes.toDouble() > FALLBACK_SHARE * size.toDouble()

    companion object {
        /** Above this share of the file fetched, a device downloads it whole. */
        const val FALLBACK_SHARE: Double = 0.70

        /** Where each segment of [index] starts in its file, by SHA-256 (the first when two are alike): the `have` of a file with this index. */
        @JvmStatic
        fun offsets(index: SegmentIndex): Map<Sha256Digest, Long> {
            val have = HashMap<Sha256Digest, Long>()
            val offsets = index.offsets
            for (position in 0 until index.segmentCount) have.putIfAbsent(index.segment(position).sha256, offsets[position])
            return have
        }
    }
}
