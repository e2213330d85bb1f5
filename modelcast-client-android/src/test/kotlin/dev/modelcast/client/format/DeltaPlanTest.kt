package dev.modelcast.client.format

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** Which segments of a new file are copied from an old one, and how the rest is fetched. */
class DeltaPlanTest {
    private fun digest(tag: Int) = Sha256Digest.hash(byteArrayOf(tag.toByte()))

    /** An index of segments `(tag, length)`: equal tags are equal bytes. */
    private fun index(vararg segments: Pair<Int, Int>) = SegmentIndex.of("modelcast-segments-1", segments.map { it.second.toLong() }.sum(),
        digest(-1), segments.map { SegmentIndex.Segment(it.second, digest(it.first)) })

    @Test
    fun copiesRunsFromTheOldFileAndFetchesTheRest() {
        val old = index(1 to 10, 2 to 20, 3 to 30, 4 to 40)
        val new = index(1 to 10, 2 to 20, 9 to 5, 8 to 6, 4 to 40, 3 to 30)
        val plan = DeltaPlan(new, DeltaPlan.offsets(old))
        assertEquals(listOf(
            DeltaPlan.Step.Copy(source = 0, offset = 0, length = 30),          // 1 and 2 lie together in the old file: one copy
            DeltaPlan.Step.Fetch(offset = 30, length = 11, segments = 2..3),  // 9 and 8 are new: one request
            DeltaPlan.Step.Copy(source = 60, offset = 41, length = 40),
            DeltaPlan.Step.Copy(source = 30, offset = 81, length = 30)         // 3 lies before 4 in the old file: a second copy
        ), plan.steps)
        assertEquals(111L, plan.size)
        assertEquals(11L, plan.fetchedBytes)
        assertEquals(100L, plan.copiedBytes)
        assertEquals(1, plan.requests)
        assertFalse(plan.prefersFullDownload)
    }

    @Test
    fun aMostlyNewFileIsDownloadedWhole() {
        val old = index(1 to 29)
        assertFalse(DeltaPlan(index(1 to 30, 2 to 70), DeltaPlan.offsets(index(1 to 30))).prefersFullDownload)  // 70 %: not more
        assertTrue(DeltaPlan(index(1 to 29, 2 to 71), DeltaPlan.offsets(old)).prefersFullDownload)
        assertFalse(DeltaPlan(index(), emptyMap()).prefersFullDownload)
    }

    @Test
    fun theFirstOfEqualSegmentsIsTheSource() {
        assertEquals(mapOf(digest(1) to 0L, digest(2) to 5L), DeltaPlan.offsets(index(1 to 5, 2 to 5, 1 to 5)))
    }

    @Test
    fun anIndexMustTileItsArtifact() {
        val error = assertThrows(SegmentIndexException::class.java) {
            SegmentIndex.of("modelcast-segments-1", 11, digest(0), listOf(SegmentIndex.Segment(10, digest(1))))
        }
        assertEquals("the segments cover 10 bytes, but the artifact has 11", error.problem)
        assertThrows(SegmentIndexException::class.java) { SegmentIndex.of("a/b", 0, digest(0), emptyList()) }
        assertThrows(SegmentIndexException::class.java) { SegmentIndex.of("s", 0, digest(0), listOf(SegmentIndex.Segment(0, digest(1)))) }
    }
}
