package dev.modelcast.client.format

import dev.modelcast.client.ClientError
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** A model's `licence`, `download_conditions` and `storage` (issue 50): read into checked values, every bad one refused naming the field. */
class ModelTermsTest {
    private val base = Vectors.load("manifest/base.json")
    private val url = "https://cdn.example.com/manifest.json"

    private fun decode(manifest: JsonValue) = Release.decode(Json.write(manifest).toByteArray(Charsets.UTF_8), url)

    /** base.json with model m's [key] set to [value]. */
    private fun withModel(key: String, value: JsonValue): JsonValue =
        base.setting("models", obj("m" to base("models")("m").setting(key, value)))

    private val licence = obj("spdx" to str("Llama-3.2-Community"), "url" to str("https://example.com/LICENSE.txt"), "acceptance" to str("required"))
    private val full = withModel("licence", licence)
        .let { it.setting("models", obj("m" to it("models")("m")
            .setting("download_conditions", obj("network" to str("any"), "cellular_max" to JsonValue.Integer(500000000), "charging" to str("required")))
            .setting("storage", obj("install_size" to JsonValue.Integer(6442450944), "priority" to JsonValue.Integer(10))))) }

    @Test
    fun theThreeObjectsAreReadWhole() {
        val model = decode(full).model("m")!!
        assertEquals(ModelLicence(LicenceTerms("Llama-3.2-Community", "https://example.com/LICENSE.txt"), LicenceAcceptance.REQUIRED), model.licence)
        assertEquals(DownloadConditions(NetworkRequirement.ANY, 500000000, ChargingRequirement.REQUIRED), model.downloadConditions)
        assertEquals(ModelStorage(6442450944, 10), model.storage)
        val plain = decode(base).model("m")!!
        assertNull(plain.licence)
        assertNull(plain.downloadConditions)
        assertNull(plain.storage)
    }

    @Test
    fun defaultsAndUnknownMembers() {
        val model = decode(withModel("licence", obj("url" to str("http://example.com/l"), "future" to JsonValue.Integer(1)))
            .let { it.setting("models", obj("m" to it("models")("m").setting("download_conditions", obj("battery" to str("high")))
                .setting("storage", obj("install_size" to JsonValue.Integer(0)))
                .setting("future_key", obj("x" to JsonValue.Decimal("1e999"))))) }).model("m")!!
        assertEquals(LicenceAcceptance.NONE, model.licence!!.acceptance)
        assertNull(model.licence!!.terms.spdx)
        assertEquals(DownloadConditions(), model.downloadConditions)
        assertEquals(50, model.storage!!.priority)
    }

    @Test
    fun anUnknownNetworkOrChargingValueIsKeptNotRefused() {
        val conditions = decode(withModel("download_conditions", obj("network" to str("satellite"), "charging" to str("solar"))))
            .model("m")!!.downloadConditions!!
        assertEquals(mapOf("network" to "satellite", "charging" to "solar"), conditions.unknown)
        assertEquals(NetworkRequirement.ANY, conditions.network)
    }

    /** Each hostile value: the member set, the field the refusal must name, and a text its message must not hold. */
    private class Hostile(val key: String, val value: JsonValue, val field: String, val hidden: String? = null)

    private val hostile = listOf(
        Hostile("licence", obj("spdx" to str("MIT\u0007")), "models.m.licence.spdx"),
        Hostile("licence", obj("spdx" to str("MIT\nOR Apache-2.0")), "models.m.licence.spdx"),
        Hostile("licence", obj("spdx" to str("MIT\u202eOR")), "models.m.licence.spdx"),
        Hostile("licence", obj("spdx" to str("MIT  OR Apache-2.0")), "models.m.licence.spdx"),
        Hostile("licence", obj("spdx" to str("")), "models.m.licence.spdx"),
        Hostile("licence", obj("spdx" to str("A".repeat(129))), "models.m.licence.spdx"),
        Hostile("licence", obj("spdx" to JsonValue.Integer(1)), "models.m.licence.spdx"),
        Hostile("licence", obj("url" to str("https://user:hunter2@example.com/LICENSE")), "models.m.licence.url", hidden = "hunter2"),
        Hostile("licence", obj("url" to str("ftp://example.com/LICENSE")), "models.m.licence.url"),
        Hostile("licence", obj("url" to str("https://example.com/" + "a".repeat(2040))), "models.m.licence.url"),
        Hostile("licence", obj("url" to str("https://example.com/LI CENSE")), "models.m.licence.url"),
        Hostile("licence", obj("acceptance" to str("required")), "models.m.licence"),
        Hostile("licence", obj("spdx" to str("MIT"), "acceptance" to str("maybe")), "models.m.licence.acceptance"),
        Hostile("licence", obj("spdx" to str("MIT"), "acceptance" to JsonValue.Bool(true)), "models.m.licence.acceptance"),
        Hostile("licence", str("MIT"), "models.m.licence"),
        Hostile("download_conditions", obj("cellular_max" to JsonValue.Integer(-1)), "models.m.download_conditions.cellular_max"),
        Hostile("download_conditions", obj("cellular_max" to JsonValue.Integer((1L shl 53) + 1)), "models.m.download_conditions.cellular_max"),
        Hostile("download_conditions", obj("cellular_max" to JsonValue.Decimal("9223372036854775808")), "models.m.download_conditions.cellular_max"),
        Hostile("download_conditions", obj("cellular_max" to str("500")), "models.m.download_conditions.cellular_max"),
        Hostile("download_conditions", obj("network" to JsonValue.Integer(1)), "models.m.download_conditions.network"),
        Hostile("download_conditions", obj("charging" to JsonValue.Bool(true)), "models.m.download_conditions.charging"),
        Hostile("download_conditions", JsonValue.Array(emptyList()), "models.m.download_conditions"),
        Hostile("storage", obj("install_size" to JsonValue.Integer(-1)), "models.m.storage.install_size"),
        Hostile("storage", obj("install_size" to JsonValue.Integer((1L shl 53) + 1)), "models.m.storage.install_size"),
        Hostile("storage", obj("install_size" to JsonValue.Decimal("1.5")), "models.m.storage.install_size"),
        Hostile("storage", obj("priority" to JsonValue.Integer(101)), "models.m.storage.priority"),
        Hostile("storage", obj("priority" to JsonValue.Integer(-1)), "models.m.storage.priority"),
        Hostile("storage", obj("priority" to str("10")), "models.m.storage.priority"),
        Hostile("storage", JsonValue.Integer(10), "models.m.storage"))

    @Test
    fun hostileValuesAreRefusedNamingTheField() {
        for (case in hostile) {
            val error = assertThrows(ClientError.InvalidManifest::class.java, { decode(withModel(case.key, case.value)) }, "${case.key} ${Json.write(case.value)}")
            assertEquals(case.field, error.field, error.message)
            val message = error.message!!
            assertTrue(message.none { it < ' ' || it == '\u202e' }, message)
            case.hidden?.let { assertFalse(message.contains(it), message) }
        }
    }

    @Test
    fun theSameHostileValuesAreRefusedInTheRollbackSection() {
        val case = hostile.first { it.hidden != null }
        val model = base("models")("m").setting(case.key, case.value)
        val manifest = base.setting("rollback", obj("sequence" to JsonValue.Integer(1), "models" to obj("m" to model)))
        assertEquals("rollback.models.m.licence.url", assertThrows(ClientError.InvalidManifest::class.java) { decode(manifest) }.field)
    }

    @Test
    fun aVariantCarriesItsModelsTermsAndNoneOfItsOwn() {
        val m = base("models")("m")
        fun variant(name: String) = obj("name" to str(name), "version" to str("1.0.0"), "files" to m("files"))
        val model = m.setting("variant", str("a")).setting("licence", licence).setting("variants", JsonValue.Array(listOf(variant("a"), variant("b"))))
        val decoded = decode(base.setting("models", obj("m" to model))).model("m")!!
        assertEquals(decoded.licence, decoded.variants[1].model.licence)
        for (key in listOf("licence", "download_conditions", "storage")) {
            val own = m.setting("variant", str("a")).setting("variants", JsonValue.Array(listOf(variant("a").setting(key, obj("spdx" to str("MIT"))), variant("b"))))
            assertEquals("models.m.variants[0]", assertThrows(ClientError.InvalidManifest::class.java) { decode(base.setting("models", obj("m" to own))) }.field, key)
        }
    }

    @Test
    fun licenceTermsBuiltByHandKeepTheRules() {
        assertThrows(ManifestValueException::class.java) { LicenceTerms(null, null) }
        assertThrows(ManifestValueException::class.java) { LicenceTerms("MIT\t", null) }
        assertEquals(LicenceTerms("MIT OR Apache-2.0", null), LicenceTerms("MIT OR Apache-2.0", null))
        assertFalse(LicenceTerms("MIT", "https://a.example/1") == LicenceTerms("MIT", "https://a.example/2"))
        assertThrows(IllegalArgumentException::class.java) { ModelStorage(priority = 101) }
        assertThrows(IllegalArgumentException::class.java) { DownloadConditions(cellularMax = -1) }
    }
}
