package dev.modelcast.client.format

import dev.modelcast.client.ClientError
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.time.Duration

/** Release.decode beyond the vectors: what it keeps, and how it words a refusal. */
class ReleaseTest {
    private val base = Vectors.load("manifest/base.json")
    private val url = "https://cdn.example.com/channels/stable/manifest.json"

    private fun decode(manifest: JsonValue) = Release.decode(Json.write(manifest).toByteArray(Charsets.UTF_8), url)
    private fun decode(text: String) = Release.decode(text.toByteArray(Charsets.UTF_8), url)
    private fun refusal(manifest: JsonValue) = assertThrows(ClientError.InvalidManifest::class.java) { decode(manifest) }
    private fun withFile(key: String, value: JsonValue): JsonValue {
        val model = base("models")("m")
        val file = model("files").items[0].setting(key, value)
        return base.setting("models", obj("m" to model.setting("files", JsonValue.Array(listOf(file)))))
    }

    @Test
    fun theBaseManifestIsReadWhole() {
        val release = decode(base)
        assertEquals(2L, release.sequence)
        assertEquals("2026-01-01T00:00:00Z", release.publishedAt.text)
        assertEquals("modelcast", release.profile)
        val model = release.model("m")!!
        assertEquals("1.0.0", model.version.text)
        val file = model.files.single()
        assertEquals(listOf("models", "m", "1.0.0", "m.bin"), file.key.segments.map { it.text })
        assertEquals(1000L, file.size)
        assertEquals("application/octet-stream", file.contentType)
        assertNull(release.rollout)
        assertNull(release.validityPeriod)
    }

    @Test
    fun aRefusalNamesTheUrlTheFieldAndTheValue() {
        val error = refusal(withFile("sha256", str("../../canary")))
        assertEquals(url, error.url)
        assertEquals("models.m.files[0].sha256", error.field)
        assertEquals("../../canary", error.value)
        assertEquals("$url: models.m.files[0].sha256 '../../canary' is not a SHA-256 digest (64 lowercase hexadecimal digits)", error.message)
    }

    @Test
    fun aDocumentThatIsNotJsonIsRefusedAsTheDocument() {
        val error = assertThrows(ClientError.InvalidManifest::class.java) { decode("{\"format\": \"modelcast-manifest\",}") }
        assertEquals("(document)", error.field)
        val duplicate = assertThrows(ClientError.InvalidManifest::class.java) { decode("{\"sequence\": 1, \"sequence\": 2}") }
        assertTrue(duplicate.reason.contains("'sequence' appears twice"), duplicate.message)
    }

    @Test
    fun numbersAsTheSwiftClientTakesThem() {
        // An integral number in another spelling is that integer (Swift's decoder takes 1000.0 and 1e3 too).
        assertEquals(1000L, decode(withFile("size", JsonValue.Decimal("1000.0"))).models[0].files[0].size)
        assertEquals(1000L, decode(withFile("size", JsonValue.Decimal("1e3"))).models[0].files[0].size)
        assertEquals("models.m.files[0].size", refusal(withFile("size", JsonValue.Decimal("1000.5"))).field)
        // Free-form numbers: integers exact, others as their double; past the double range, refused.
        val meta = decode(base.setting("meta", obj("a" to JsonValue.Decimal("1.0"), "b" to JsonValue.Decimal("0.10"), "c" to JsonValue.Decimal("123456789012345678901234567890")))).meta
        assertEquals(JsonValue.Integer(1), meta["a"])
        assertEquals(JsonValue.Decimal("0.1"), meta["b"])
        assertEquals(JsonValue.Decimal("1.2345678901234568E29"), meta["c"])
        assertEquals("meta.x[0]", refusal(base.setting("meta", obj("x" to JsonValue.Array(listOf(JsonValue.Decimal("1e400")))))).field)
    }

    @Test
    fun nullIsAbsentAndUnknownMembersAreIgnored() {
        val release = decode(base.setting("expires_at", JsonValue.Null).setting("profile", JsonValue.Null).setting("rollout", JsonValue.Null)
            .setting("future_field", obj("x" to JsonValue.Decimal("1e999"))))
        assertNull(release.expiresAt)
        assertEquals("modelcast", release.profile)
        assertEquals("sequence", refusal(base.setting("sequence", JsonValue.Null)).field)
    }

    @Test
    fun validityPeriodAndRelease() {
        val release = decode(base.setting("expires_at", str("2026-01-31T00:00:00Z")).setting("min_app_version", str("2.0")).setting("replaces", JsonValue.Integer(1)))
        assertEquals(Duration.ofDays(30), release.validityPeriod)
        assertEquals(AppVersion("2.0.0"), release.minAppVersion)
        assertEquals(1L, release.replaces)
    }

    @Test
    fun otherProfilesAreNotThisFormat() {
        for (file in listOf("nomlens.json", "tiers.json", "catalog.json", "latest.json")) {
            val error = assertThrows(ClientError.InvalidManifest::class.java) { Release.decode(Vectors.bytes("manifest/valid/$file"), file) }
            assertEquals("format", error.field, file)
            assertTrue(error.reason.contains("is missing"), error.message)
        }
    }

    /** A model with variants `a` (requires [requiresA]) and `b`, the model's own fields being [own]'s. */
    private fun variants(requiresA: JsonValue, own: String = "a", ownVersion: String = "1.0.0", extraA: Pair<String, JsonValue>? = null): JsonValue {
        val m = base("models")("m")
        fun variant(name: String, requires: JsonValue) = obj("name" to str(name), "requires" to requires, "version" to str("1.0.0"), "files" to m("files"))
        val a = variant("a", requiresA).let { if (extraA == null) it else it.setting(extraA.first, extraA.second) }
        val model = m.setting("version", str(ownVersion)).setting("variant", str(own)).setting("download", str("prefetch"))
            .setting("variants", JsonValue.Array(listOf(a, variant("b", obj()))))
        return base.setting("models", obj("m" to model))
    }

    @Test
    fun variantsAreUnitsOfTheirModel() {
        val model = decode(variants(obj("min_memory" to JsonValue.Integer(8L shl 30), "min_vram" to JsonValue.Integer(1)))).model("m")!!
        assertEquals(listOf("a", "b"), model.variants.map { it.name.text })
        assertEquals("a", model.defaultVariant?.text)
        assertNull(model.variant)
        val a = model.variants[0]
        assertEquals(listOf("min_vram"), a.requirements.unknown)
        assertEquals("a", a.model.variant?.text)
        assertEquals(DownloadPolicy.PREFETCH, a.model.download)
        val choice = model.choice(DeviceProfile(physicalMemory = 1L shl 28))
        assertEquals("b", choice.chosen?.variant?.text)
        assertEquals(listOf("min_vram", "min_memory"), choice.skipped.single().unmet.map { it.requirement })
        assertEquals(listOf("requires 'min_vram', which this client does not know", "needs 8 GiB of memory; the device has 0.2 GiB"), choice.skipped.single().reasons)
    }

    @Test
    fun variantRulesAreEnforced() {
        assertEquals("models.m", refusal(variants(obj(), ownVersion = "2.0.0")).field)
        assertEquals("models.m.variant", refusal(variants(obj(), own = "c")).field)
        assertEquals("models.m.variants[0]", refusal(variants(obj(), extraA = "download" to str("essential"))).field)
        assertEquals("models.m.variants[0].requires.['x\\u{a}y']", refusal(variants(obj("x\ny" to JsonValue.Integer(1)))).field)
        assertEquals("models.m.variants[0].requires.min_memory", refusal(variants(obj("min_memory" to JsonValue.Decimal("1.5")))).field)
        assertEquals(8L, decode(variants(obj("min_memory" to JsonValue.Decimal("8.0")))).model("m")!!.variants[0].requirements.minMemory)
    }

    /** base.json's model with files named [names] (each its own key). */
    private fun files(vararg names: String): JsonValue {
        val model = base("models")("m")
        val file = model("files").items[0]
        val entries = names.mapIndexed { index, name -> file.setting("name", str(name)).setting("key", str("models/m/1.0.0/f$index")) }
        return base.setting("models", obj("m" to model.setting("files", JsonValue.Array(entries))))
    }

    @Test
    fun placementsCollideAsTheSwiftClientLowercasesThem() {
        // Swift's lowercased() maps each code point fully and without context: İ becomes i + U+0307, a final Σ becomes σ.
        assertEquals("models.m.files[1]", refusal(files("\u0130.bin", "i\u0307.bin")).field)
        assertEquals("models.m.files[1]", refusal(files("A\u03a3", "a\u03c3")).field)
        assertEquals(2, decode(files("\u0130.bin", "i.bin")).models[0].files.size)
        assertEquals(2, decode(files("A\u03a3", "a\u03c2")).models[0].files.size)
    }

    @Test
    fun aModelBuiltByHandKeepsTheRules() {
        val model = decode(base).model("m")!!
        assertThrows(IllegalArgumentException::class.java) { model.copy(tree = PathSegment("T.mlpackage")) }
        assertThrows(IllegalArgumentException::class.java) { model.copy(files = model.files + model.files) }
        assertThrows(IllegalArgumentException::class.java) { model.copy(defaultVariant = ModelName("a")) }
        assertThrows(IllegalArgumentException::class.java) { model.files[0].copy(size = -1) }
    }

    @Test
    fun aModelWithoutVariantsIsItsOwnChoice() {
        val model = decode(base).model("m")!!
        val choice = model.choice(DeviceProfile())
        assertEquals(model, choice.chosen)
        assertTrue(choice.skipped.isEmpty())
    }
}
