package dev.modelcast.client.format

import dev.modelcast.client.ClientError
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** conformance/vectors/variants: which variant a device takes, why it skipped the others, and `requires` a manifest must not carry. */
class VariantVectorsTest {
    private val vectors = Vectors.load("variants/variants.json")

    /** base.json with model `m` holding [variants] (name and requires each), one file each, the first the default. */
    private fun manifest(variants: List<JsonValue>): ByteArray {
        val entries = variants.mapIndexed { index, variant ->
            val name = variant("name").text
            val key = "models/m/variants/$name/1.0.0/m.bin"
            val file = obj("name" to str("m.bin"), "key" to str(key), "url" to str("https://cdn.example.com/models/$key"),
                "sha256" to str("0".repeat(62) + String.format("%02x", index)), "size" to JsonValue.Integer(100),
                "content_type" to str("application/octet-stream"))
            obj("name" to str(name), "requires" to variant("requires"), "version" to str("1.0.0"), "files" to JsonValue.Array(listOf(file)))
        }
        val model = obj("version" to str("1.0.0"), "files" to entries[0]("files"), "variant" to entries[0]("name"), "variants" to JsonValue.Array(entries))
        return Json.write(Vectors.load("manifest/base.json").setting("models", obj("m" to model))).toByteArray(Charsets.UTF_8)
    }

    private fun device(json: JsonValue) = DeviceProfile(
        physicalMemory = json("memory").optionalInteger,
        platform = json("platform").optionalText?.let { DevicePlatform.fromWireName(it) },
        osVersion = json("os_version").optionalText,
        architecture = json("architecture").optionalText,
        accelerators = json("accelerators").items.mapNotNull { Accelerator.fromWireName(it.text) }.toSet(),
        capabilities = json("capabilities").items.map { it.text }.toSet())

    @Test
    fun choices() {
        val choices = vectors("choices").items
        assertEquals(30, choices.size, "choice vectors")
        for (vector in choices) {
            val label = vector("name").text
            val model = Release.decode(manifest(vector("variants").items), label).model("m")!!
            val choice = model.choice(device(vector("device")))
            assertEquals(vector("chosen").optionalText, choice.chosen?.variant?.text, label)
            val skipped = vector("skipped").items
            assertEquals(skipped.map { it("variant").text }, choice.skipped.map { it.variant }, label)
            for ((actual, expected) in choice.skipped.zip(skipped)) {
                assertEquals(expected("reasons").items.map { it("requirement").text }, actual.unmet.map { it.requirement }, "$label: requirements")
                assertEquals(expected("reasons").items.map { it("message").text }, actual.reasons, "$label: messages")
            }
        }
    }

    @Test
    fun invalidRequirementsAreRefusedNamingTheField() {
        val invalid = vectors("invalid_requirements").items
        assertEquals(15, invalid.size, "invalid requirement vectors")
        for (vector in invalid) {
            val label = vector("name").text
            val variants = listOf(obj("name" to str("v"), "requires" to vector("requires")), obj("name" to str("any"), "requires" to obj()))
            val error = assertThrows(ClientError.InvalidManifest::class.java, { Release.decode(manifest(variants), label) }, label)
            assertTrue(error.field.startsWith(vector("field").text), "$label: ${error.message}")
        }
    }
}
