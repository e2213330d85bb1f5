package dev.modelcast.client.net

/**
 * How to build a new version of a file from an old one, step by step in the new file's
 * order: copy the segments the old file holds, fetch the others in one request per run.
 */
class SegmentPlan(val steps: List<Step>, val size: Long) {
    /** One step of a plan. */
    sealed class Step {
        /** Copy `length` bytes at `source` in the old file to `offset` in the new one. */
        data class Copy(val source: Long, val offset: Long, val length: Long) : Step()

        /** Fetch bytes `offset until offset+length` of the new file in one request: segments `first until end`. */
        data class Fetch(val offset: Long, val length: Long, val first: Int, val end: Int) : Step()
    }

    /** Bytes to download. */
    val fetchedBytes: Long get() = steps.filterIsInstance<Step.Fetch>().fold(0L) { total, step -> total + step.length }

    /** Bytes copied from the old file. */
    val copiedBytes: Long get() = size - fetchedBytes

    /** Range requests the plan makes. */
    val requests: Int get() = steps.count { it is Step.Fetch }

    /** True when the plan fetches more than [FALLBACK_SHARE] of the file: one plain download is cheaper. */
    val prefersFullDownload: Boolean get() = size > 0 && fetchedBytes.toDouble() > FALLBACK_SHARE * size

    companion object {
        /** Above this share of the file fetched, a device downloads it whole instead. */
        const val FALLBACK_SHARE = 0.70

        /**
         * The plan for the file `layout` describes given the segments the old file holds:
         * `have` maps a segment's SHA-256 (hex) to where those bytes start in the old file
         * (each proven again by hashing when copied, never taken on trust).
         */
        fun of(layout: SegmentLayout, have: Map<String, Long>): SegmentPlan {
            val steps = ArrayList<Step>()
            for ((number, segment) in layout.segments.withIndex()) {
                val source = have[segment.sha256]
                val last = steps.lastOrNull()
                if (source != null) {
                    if (last is Step.Copy && last.source + last.length == source) {
                        steps[steps.size - 1] = last.copy(length = last.length + segment.length)
                    } else {
                        steps.add(Step.Copy(source, segment.offset, segment.length.toLong()))
                    }
                } else if (last is Step.Fetch) {
                    steps[steps.size - 1] = last.copy(length = last.length + segment.length, end = number + 1)
                } else {
                    steps.add(Step.Fetch(segment.offset, segment.length.toLong(), number, number + 1))
                }
            }
            return SegmentPlan(steps, layout.artifactSize)
        }

        /** Where each segment of `layout` starts in its file, by SHA-256 (the first of equal ones): the `have` of a file with this layout. */
        fun offsets(layout: SegmentLayout): Map<String, Long> {
            val have = LinkedHashMap<String, Long>()
            for (segment in layout.segments) if (segment.sha256 !in have) have[segment.sha256] = segment.offset
            return have
        }
    }
}
