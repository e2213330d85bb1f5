package dev.modelcast.client.format

import org.junit.jupiter.api.Assertions.assertArrayEquals
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.io.File

/** conformance/vectors/segment-index: every valid index read field by field, every broken one refused. */
class SegmentIndexVectorsTest {
    private val indexes = Vectors.load("segment-index/segment-index.json")("indexes").items

    @Test
    fun validIndexes() {
        val valid = indexes.filter { it("valid").flag }
        assertEquals(3, valid.size, "valid indexes")
        for (vector in valid) {
            val file = vector("file").text
            val data = Vectors.bytes("segment-index/$file")
            val index = SegmentIndex.decode(data)
            assertArrayEquals(data, index.encoded(), "$file re-encodes to its bytes")
            assertEquals(vector("index_size").integer, data.size.toLong(), file)
            assertEquals(vector("index_sha256").text, Sha256Digest.hash(data).hex, file)
            assertEquals(vector("format_version").integer, SegmentIndex.FORMAT_VERSION.toLong(), file)
            assertEquals(vector("scheme").text, index.scheme, file)
            assertEquals(vector("artifact_size").integer, index.artifactSize, file)
            assertEquals(vector("artifact_sha256").text, index.artifactSha256.hex, file)
            val segments = vector("segments").items
            assertEquals(segments.map { it("offset").integer }, index.offsets.toList(), file)
            assertEquals(segments.map { it("length").integer }, index.segments.map { it.length.toLong() }, file)
            assertEquals(segments.map { it("sha256").text }, index.segments.map { it.sha256.hex }, file)
            vector("artifact_file").optionalText?.let { artifact ->
                val bytes = Vectors.bytes("segment-index/$artifact")
                assertEquals(index.artifactSha256, Sha256Digest.hash(bytes), file)
                for ((position, offset) in index.offsets.withIndex()) {
                    assertEquals(index.segment(position).sha256, Sha256Digest.hash(bytes, offset.toInt(), index.segment(position).length), "$file at $offset")
                }
            }
        }
    }

    @Test
    fun invalidIndexesAreRefused() {
        val invalid = indexes.filter { !it("valid").flag }
        assertEquals(17, invalid.size, "invalid indexes")
        for (vector in invalid) {
            val file = vector("file").text
            val error = assertThrows(SegmentIndexException::class.java, { SegmentIndex.decode(Vectors.bytes("segment-index/$file")) }, file)
            assertTrue(error.problem.contains(vector("problem").text), "$file: ${error.problem}")
        }
    }

    /** docs/segment-index.md's vector: the hex in the docs, and the artifact it describes (byte i = i mod 251), hashed. */
    @Test
    fun documentedVector() {
        val hex = File(Vectors.root, "../../docs/segment-index.test-vector.hex").readText().filter { it in '0'..'9' || it in 'a'..'f' }
        val data = ByteArray(hex.length / 2) { hex.substring(2 * it, 2 * it + 2).toInt(16).toByte() }
        val index = SegmentIndex.decode(data)
        val artifact = ByteArray(1_048_579) { (it % 251).toByte() }
        assertEquals(Sha256Digest.hash(artifact), index.artifactSha256)
        assertEquals(listOf(1_048_576, 3), index.segments.map { it.length })
        for ((position, offset) in index.offsets.withIndex()) {
            assertEquals(index.segment(position).sha256, Sha256Digest.hash(artifact, offset.toInt(), index.segment(position).length))
        }
    }
}
