package dev.modelcast.client.format

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Test

/** SegmentIndex.of: the segments must tile the artifact. (A delta plan itself: net.SegmentPlanTest.) */
class SegmentIndexOfTest {
    private fun digest(tag: Int) = Sha256Digest.hash(byteArrayOf(tag.toByte()))

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
