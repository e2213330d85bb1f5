package dev.modelcast.client.format

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Test

/** conformance/vectors/app-version: app versions and model versions, valid or not, and their order. */
class AppVersionVectorsTest {
    private val vectors = Vectors.load("app-version/app-version.json")

    private fun <T : Comparable<T>> order(a: T, b: T): String = when {
        a < b -> "<"
        b < a -> ">"
        a == b -> "="
        else -> "incomparable"
    }

    private fun mirrored(order: String): String = when (order) { "<" -> ">"; ">" -> "<"; else -> order }

    @Test
    fun appVersions() {
        val app = vectors("app_version")
        assertEquals(60, app("valid").items.size + app("invalid").items.size + app("comparisons").items.size, "app-version vectors")
        for (vector in app("valid").items) {
            val text = vector("text").text
            val version = AppVersion(text)
            assertEquals(vector("numbers").items.map { it.integer }, version.numbers, text)
            assertEquals(vector("prerelease").items.map { it.text }, version.prerelease, text)
        }
        for (vector in app("invalid").items) {
            assertThrows(ManifestValueException::class.java, { AppVersion(vector("text").text) }, vector("why").text)
        }
        for (vector in app("comparisons").items) {
            val a = AppVersion(vector("a").text)
            val b = AppVersion(vector("b").text)
            assertEquals(vector("order").text, order(a, b), vector.toString())
            assertEquals(mirrored(vector("order").text), order(b, a), vector.toString())
            if (vector("order").text == "=") assertEquals(a.hashCode(), b.hashCode(), "equal versions hash alike: $vector")
        }
    }

    @Test
    fun modelVersions() {
        val model = vectors("model_version")
        assertEquals(40, model("valid").items.size + model("invalid").items.size + model("comparisons").items.size, "model-version vectors")
        for (vector in model("valid").items) {
            val text = vector("text").text
            val version = ModelVersion(text).semantic
            assertEquals(vector("core").items.map { it.text }, listOf(version.major, version.minor, version.patch).map { java.lang.Long.toUnsignedString(it) }, text)
            assertEquals(vector("prerelease").items.map { it.text }, version.prerelease, text)
        }
        for (vector in model("invalid").items) {
            assertThrows(ManifestValueException::class.java, { ModelVersion(vector("text").text) }, vector("why").text)
        }
        for (vector in model("comparisons").items) {
            val a = ModelVersion(vector("a").text).semantic
            val b = ModelVersion(vector("b").text).semantic
            assertEquals(vector("order").text, order(a, b), vector.toString())
            assertEquals(mirrored(vector("order").text), order(b, a), vector.toString())
        }
    }
}
