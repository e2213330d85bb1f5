package dev.modelcast.client.format

import dev.modelcast.client.ClientError
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assertions.fail
import org.junit.jupiter.api.Test

/** conformance/vectors/manifest: every valid manifest reads as expected, every hostile one is refused naming the field. */
class ManifestVectorsTest {
    private val vectors = Vectors.load("manifest/manifest.json")

    @Test
    fun validManifestsReadAsExpected() {
        val valid = vectors("valid").items
        assertEquals(8, valid.size, "valid manifests")
        for (vector in valid) {
            val file = vector("file").text
            val data = Vectors.bytes("manifest/$file")
            if (vector("profile").text != "modelcast") {
                // Another profile's document is not a modelcast manifest: the client refuses it, as the Swift client does.
                val error = refusal(data, file)
                assertEquals("format", error.field, "$file: ${error.message}")
                continue
            }
            val release = Release.decode(data, file)
            val expected = vector("release")
            assertEquals(expected("sequence").integer, release.sequence, file)
            assertEquals(expected("channel").text, release.channel.text, file)
            assertEquals(expected("expires_at").optionalText, release.expiresAt?.text, file)
            assertEquals(expected("min_app_version").optionalText, release.minAppVersion?.text, file)
            assertEquals(expected("models"), summary(release.models), file)
            if (expected("rollout") != JsonValue.Null) {
                assertEquals(expected("rollout")("salt").text, release.rollout?.salt, file)
                assertEquals(expected("rollout")("rollback_sequence").integer, release.rollback?.sequence, file)
                assertEquals(expected("rollout")("fallback"), summary(release.rollback?.models ?: emptyList()), file)
            } else {
                assertNull(release.rollout, file)
            }
        }
    }

    /** The models as the vectors summarise them. */
    private fun summary(models: List<ReleaseModel>): JsonValue = JsonValue.Object(models.associateTo(LinkedHashMap()) { model ->
        val members = linkedMapOf<String, JsonValue>(
            "version" to str(model.version.text),
            "files" to JsonValue.Array(model.files.map { file ->
                obj("placement" to str(file.placement.text), "url" to str(file.url.text), "sha256" to str(file.sha256.text),
                    "size" to JsonValue.Integer(file.size), "segment_index" to (file.segments?.let { str(it.url.text) } ?: JsonValue.Null))
            }))
        model.tree?.let { members["tree"] = str(it.text) }
        if (model.variants.isNotEmpty()) members["variants"] = JsonValue.Array(model.variants.map { str(it.name.text) })
        model.download?.let { members["download"] = str(it.wireName) }
        model.name.text to JsonValue.Object(members)
    })

    @Test
    fun hostileManifestsAreRefusedNamingTheField() {
        val base = Vectors.load("manifest/" + vectors("base").text)
        val hostile = vectors("hostile").items
        assertEquals(189, hostile.size, "hostile patches")
        for (vector in hostile) {
            val label = vector("name").text
            val manifest = vector("patch").items.fold(base) { document, operation -> JsonPatch.apply(document, operation) }
            val data = Json.write(manifest).toByteArray(Charsets.UTF_8)
            if (vector("valid").flag) {
                try { Release.decode(data, label) } catch (error: ClientError) { fail<Unit>("$label: refused: ${error.message}") }
            } else {
                val message = refusal(data, label).message ?: ""
                assertTrue(message.contains(vector("mentions").text), "$label: '$message' does not mention '${vector("mentions").text}'")
            }
        }
    }

    @Test
    fun rawDocumentsAreRefused() {
        val raw = vectors("raw").items
        assertEquals(5, raw.size, "raw documents")
        for (vector in raw) {
            val label = vector("name").text
            val message = refusal(Vectors.bytes("manifest/" + vector("file").text), label).message ?: ""
            assertTrue(message.contains(vector("mentions").text), "$label: '$message' does not mention '${vector("mentions").text}'")
        }
    }

    private fun refusal(data: ByteArray, label: String): ClientError.InvalidManifest = try {
        Release.decode(data, label)
        fail("$label: accepted")
    } catch (error: ClientError.InvalidManifest) {
        error
    }
}
