package dev.modelcast.client.trust

import dev.modelcast.client.format.Timestamp
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/**
 * conformance/vectors/keyset (see its README): every case walked as a client walks, with the
 * outcome and the error fields the README makes the contract (`code`, `at`, and per code
 * `field`, `found`, `role`, `key_set_version`), the floors, the manifests under the newest
 * key set, and the canonical writer's bytes against every document of the vectors. Failures
 * are gathered so one run names every case that differs.
 */
class KeySetVectorsTest {
    private val vectors = Vectors.json("keyset/keyset.json")
    private val cases = vectors.getValue("cases").list().map { it.obj() }

    /** The error fields a refusal has, as the vectors write them (numbers as decimal text). */
    private fun refusal(error: Exception): Map<String, String> = when (error) {
        is KeySetError.InvalidDocument -> mapOf("code" to "invalid_document", "at" to error.path, "field" to error.error.field)
        is KeySetError.VersionGap -> mapOf("code" to "version_gap", "at" to error.path, "found" to error.found.toString())
        is KeySetError.ThresholdNotMet -> mapOf("code" to "threshold_not_met", "at" to error.path, "role" to error.role.fieldName,
            "key_set_version" to error.keySetVersion.toString())
        is KeySetError.Expired -> mapOf("code" to "expired", "at" to error.path)
        is TrustError.MalformedSignature -> mapOf("code" to "malformed_signatures", "at" to error.source)
        else -> mapOf("code" to "unexpected: $error")
    }

    private class Walk(var trusted: KeySet) {
        /** Per link: null (kept) or the new floors of beta and stable, as the vectors' README says. */
        val floors = ArrayList<Map<String, Long>?>()
        var afterFirstCheck: Long? = null
        var refusal: Map<String, String>? = null
    }

    /** Walks [folder]'s served key sets from [walk]'s trusted one, as checks of at most MAX_VERSIONS_PER_CHECK versions. */
    private fun walk(walk: Walk, folder: String, now: java.time.Instant) {
        try {
            var check = 0
            while (Vectors.file(folder + KeySet.path(walk.trusted.version + 1)).exists()) {
                check++
                var steps = 0
                // One check: the next version until the server has none (a 404 here: no file) or the bound.
                while (steps < KeySetChain.MAX_VERSIONS_PER_CHECK && Vectors.file(folder + KeySet.path(walk.trusted.version + 1)).exists()) {
                    val path = KeySet.path(walk.trusted.version + 1)
                    val document = Vectors.bytes(folder + path)
                    val signatures = MinisignSignatureList.parse(Vectors.bytes("$folder$path.sigs"), "$path.sigs").signatures
                    val next = KeySetChain.step(walk.trusted, document, signatures)
                    // Every document the generator wrote with its canonical writer is what this one writes.
                    assertEquals(String(document, Charsets.UTF_8), String(next.canonicalBytes(), Charsets.UTF_8), "$folder$path")
                    val trusted = walk.trusted
                    walk.floors.add(if (KeySetChain.resetsSequenceFloors(trusted, next)) {
                        listOf("beta", "stable").associate { it to (KeySetChain.sequenceFloor(trusted, next, it) ?: -1L) }
                    } else null)
                    walk.trusted = next
                    steps++
                }
                if (check == 1) walk.afterFirstCheck = walk.trusted.version
            }
            walk.trusted.checkFresh(now)
        } catch (error: KeySetError) {
            walk.refusal = refusal(error)
        } catch (error: TrustError.MalformedSignature) {
            walk.refusal = refusal(error)
        }
    }

    @Test
    fun everyChainHasItsOutcomeFloorsAndManifests() {
        assertEquals(35, cases.size, "cases in keyset.json")
        val failures = ArrayList<String>()
        var manifestChecks = 0
        for (vector in cases) {
            val label = vector.getValue("name") as String
            val folder = "keyset/cases/$label/"
            val now = Timestamp.parse(vector.getValue("now") as String)!!
            val pinned = Vectors.bytes("keyset/" + vector["trusted"])
            val walk = Walk(KeySet.parse(pinned))
            if (walk.trusted.version != vector["trusted_version"]) failures.add("$label: trusted version ${walk.trusted.version}")
            if (!walk.trusted.canonicalBytes().contentEquals(pinned)) failures.add("$label: the canonical writer differs from trusted.json")
            walk(walk, folder, now)
            when (vector["outcome"]) {
                "accepted" -> {
                    if (walk.refusal != null) failures.add("$label: refused ${walk.refusal}")
                    if (walk.trusted.version != vector["final_version"]) failures.add("$label: final version ${walk.trusted.version}")
                    if (walk.floors != vector["floors"]) failures.add("$label: floors ${walk.floors}, expected ${vector["floors"]}")
                    if (vector.containsKey("version_after_first_check")) {
                        if (KeySetChain.MAX_VERSIONS_PER_CHECK.toLong() != vector["max_versions_per_check"]) failures.add("$label: bound")
                        if (walk.afterFirstCheck != vector["version_after_first_check"]) failures.add("$label: after one check ${walk.afterFirstCheck}")
                    }
                }
                "refused" -> {
                    val expected = vector.getValue("error").obj().mapValues { it.value.toString() }
                    if (walk.refusal != expected) failures.add("$label: ${walk.refusal ?: "accepted"}, expected $expected")
                }
                else -> failures.add("$label: outcome ${vector["outcome"]}")
            }
            for (item in vector["manifests"]?.list() ?: emptyList()) {
                val check = item.obj()
                val name = "$label/${check["label"]}"
                manifestChecks++
                val signatures = MinisignSignatureList.parse(Vectors.bytes("keyset/" + check["signatures"]), name).signatures
                val outcome = try {
                    val proof = walk.trusted.verifyManifest(Vectors.bytes("keyset/" + check["bytes"]), signatures, check["file"] as String,
                        check["sequence"] as Long, check["expires_at"] as String?)
                    val signers = proof.signers.map { it.keyId.hex }
                    if (signers != check["signers"]) failures.add("$name: signers $signers, expected ${check["signers"]}")
                    "accepted"
                } catch (error: KeySetError.ThresholdNotMet) {
                    if (error.role != KeySetRoleName.MANIFEST) failures.add("$name: the ${error.role} threshold")
                    "refused"
                }
                if (outcome != check["outcome"]) failures.add("$name: $outcome, expected ${check["outcome"]}")
            }
        }
        assertEquals(10, manifestChecks, "manifest checks in keyset.json")
        assertEquals(emptyList<String>(), failures)
    }

    /** The vectors' keys read as this package reads them: same key ids and base64 lines. */
    @Test
    fun theVectorKeysReadAsListed() {
        val keys = vectors.getValue("keys").obj()
        assertEquals(6, keys.size)
        for ((name, entry) in keys) {
            val key = MinisignPublicKey.parse(Vectors.text("keyset/" + entry.obj()["file"]), name)
            assertEquals(entry.obj()["key_id"], key.keyId.hex, name)
            assertEquals(entry.obj()["public_key"], key.base64, name)
        }
        assertTrue(cases.any { it["outcome"] == "accepted" } && cases.any { it["outcome"] == "refused" })
    }
}
