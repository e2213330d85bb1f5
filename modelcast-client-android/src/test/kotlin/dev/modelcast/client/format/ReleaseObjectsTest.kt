package dev.modelcast.client.format

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** Release.objects over the published vectors: every object once, in the documented order. */
class ReleaseObjectsTest {
    private fun objects(file: String) = Release.decode(Vectors.bytes("manifest/valid/$file"), file).objects

    @Test
    fun variantsSegmentIndexesAndBundlesAreListedOnce() {
        val objects = objects("modelcast-variants.json")
        assertEquals(objects.map { it.key.text }.distinct(), objects.map { it.key.text })
        val release = Release.decode(Vectors.bytes("manifest/valid/modelcast-variants.json"), "v")
        val expectedKeys = release.models.flatMap { model ->
            (model.variants.map { it.model } + model).flatMap { unit -> unit.files.flatMap { listOfNotNull(it.key, it.segments?.key) } + listOfNotNull(unit.modelSignature?.key) }
        }.map { it.text }.distinct()
        assertEquals(expectedKeys, objects.map { it.key.text })
        assertTrue(objects.any { it.kind == ReleaseObject.Kind.SEGMENT_INDEX && it.label.startsWith("segment index of ") })
        assertTrue(objects.filter { it.kind == ReleaseObject.Kind.ARTIFACT }.all { it.unit.contains('@') || it.entry.variants.isEmpty() })
    }

    @Test
    fun theFallbackComesLastAndSaysSo() {
        val objects = objects("modelcast-rollout.json")
        val firstFallback = objects.indexOfFirst { it.section == ReleaseObject.Section.FALLBACK }
        assertTrue(firstFallback > 0)
        assertTrue(objects.drop(firstFallback).all { it.section == ReleaseObject.Section.FALLBACK && it.label.endsWith(" (rollback section)") })
    }

    @Test
    fun aTreeFileIsPlacedInsideItsTree() {
        val release = Release.decode(Vectors.bytes("manifest/valid/modelcast-tree.json"), "tree")
        val tree = release.models[0].tree!!.text
        assertTrue(release.objects.filter { it.kind == ReleaseObject.Kind.ARTIFACT }.all { it.place!!.startsWith("$tree/") })
    }
}
