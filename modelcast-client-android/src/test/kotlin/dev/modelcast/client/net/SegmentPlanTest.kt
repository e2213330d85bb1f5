package dev.modelcast.client.net

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.security.MessageDigest

/** Which segments of a new file are copied from an old one, and how the rest is fetched. */
class SegmentPlanTest {
    private fun digest(tag: Int): String =
        MessageDigest.getInstance("SHA-256").digest(byteArrayOf(tag.toByte())).joinToString("") { String.format("%02x", it) }

    /** A layout of segments `(tag, length)`: equal tags are equal bytes. */
    private fun layout(vararg segments: Pair<Int, Int>): SegmentLayout {
        var offset = 0L
        val list = segments.map { (tag, length) -> Segment(offset, length, digest(tag)).also { offset += length } }
        return SegmentLayout(list, offset, digest(-1))
    }

    @Test
    fun copiesRunsFromTheOldFileAndFetchesTheRest() {
        val old = layout(1 to 10, 2 to 20, 3 to 30, 4 to 40)
        val new = layout(1 to 10, 2 to 20, 9 to 5, 8 to 6, 4 to 40, 3 to 30)
        val plan = SegmentPlan.of(new, SegmentPlan.offsets(old))
        assertEquals(listOf(
            SegmentPlan.Step.Copy(source = 0, offset = 0, length = 30),         // 1 and 2 lie together in the old file: one copy
            SegmentPlan.Step.Fetch(offset = 30, length = 11, first = 2, end = 4), // 9 and 8 are new: one request
            SegmentPlan.Step.Copy(source = 60, offset = 41, length = 40),
            SegmentPlan.Step.Copy(source = 30, offset = 81, length = 30)        // 3 lies before 4 in the old file: a second copy
        ), plan.steps)
        assertEquals(111L, plan.size)
        assertEquals(11L, plan.fetchedBytes)
        assertEquals(100L, plan.copiedBytes)
        assertEquals(1, plan.requests)
        assertFalse(plan.prefersFullDownload)
    }

    @Test
    fun aMostlyNewFileIsDownloadedWhole() {
        val old = layout(1 to 29)
        assertFalse(SegmentPlan.of(layout(1 to 30, 2 to 70), SegmentPlan.offsets(layout(1 to 30))).prefersFullDownload)  // 70 %: not more
        assertTrue(SegmentPlan.of(layout(1 to 29, 2 to 71), SegmentPlan.offsets(old)).prefersFullDownload)
        assertFalse(SegmentPlan(emptyList(), 0).prefersFullDownload)
    }

    @Test
    fun theFirstOfEqualSegmentsIsTheSource() {
        assertEquals(mapOf(digest(1) to 0L, digest(2) to 5L), SegmentPlan.offsets(layout(1 to 5, 2 to 5, 1 to 5)))
    }
}
