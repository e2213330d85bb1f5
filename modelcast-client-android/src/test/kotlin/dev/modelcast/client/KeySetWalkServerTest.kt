package dev.modelcast.client

import dev.modelcast.client.install.ClientState
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.io.File
import java.nio.file.Files

/**
 * Issue 51, layer 4b: the key set walk ([ClientConfiguration.trustedKeySet]) against a real
 * HTTP server on 127.0.0.1 serving a site the real CLI wrote (`keys create`, `keys rotate
 * --revoke`, `publish --sign`), as the Swift client's KeySetClientTests do: the vectors prove
 * the format, only a CLI-written site proves the two implementations agree on the files.
 * The site and its server: [KeySetSite] (the CLI must be built; without it the tests are
 * skipped, not passed).
 */
class KeySetWalkServerTest {
    private fun site(missingStatus: Int = 404): KeySetSite = KeySetSite.start(missingStatus)

    /** Rotation K1 → K2 is followed after key set 2; a manifest the revoked K1 signs is refused, nothing installed. */
    @Test
    fun rotationIsFollowedAndARevokedKeysManifestIsRefused() = site().use { site ->
        site.publish("1.0.0", site.k1)
        site.createKeySet()
        val a = site.device("a")
        a.updateBlocking()
        assertEquals("1.0.0", a.installed("m")?.version)

        site.rotateToK2()
        site.publish("1.0.1", site.k2)
        assertEquals(UpdateOutcome.Updated(2, mapOf("m" to "1.0.1")), a.updateBlocking())
        assertEquals("1.0.1", a.installed("m")?.version)
        val state = String(Files.readAllBytes(File(site.work, "a/state.json").toPath()))
        assertTrue(Regex("\"keySet\"\\s*:\\s*\\{[^}]*\"version\"\\s*:\\s*2").containsMatchIn(state), "the newest verified key set is kept: $state")

        // The leaked, revoked K1 signs the live manifest: refused by the device that walked to
        // key set 2 and by a new one that starts from key set 1 (its walk reaches set 2 first).
        site.forge(site.k1)
        for (name in listOf("a", "b")) {
            val error = assertRaises<ClientError.ManifestThresholdNotMet> { site.device(name).updateBlocking() }
            assertEquals(2L, error.keySetVersion, name)
            assertTrue(error.reason.contains(site.k1.id, ignoreCase = true), "$name: ${error.reason}")
        }
        assertEquals("1.0.1", a.installed("m")?.version, "a keeps what it had")
        assertEquals(emptyList<String>(), site.models("b"), "nothing installed")
    }

    /**
     * Fast-forward: the leaked K1 serves sequence 2^53 before the rotation, which the device
     * accepts; key set 2 revokes K1 and resets the floor to the genuine live sequence, so the
     * genuine, lower K2 manifest is accepted, and a replay of an older K2 one still is not.
     */
    @Test
    fun aLeakedKeysFastForwardIsUndoneByTheRotation() = site().use { site ->
        site.publish("1.0.0", site.k1)
        site.createKeySet()
        site.publish("1.0.1", site.k1)
        val device = site.device("d")
        device.updateBlocking()
        assertEquals("1.0.1", device.installed("m")?.version)

        val genuine = site.save()
        val huge = 1L shl 53
        site.forge(site.k1, huge)
        assertEquals(UpdateOutcome.UpToDate(huge), device.updateBlocking(), "a client before the rotation accepts the leaked key's sequence")
        site.restore(genuine)

        site.rotateToK2()
        site.publish("1.0.2", site.k2)
        assertEquals(UpdateOutcome.Updated(3, mapOf("m" to "1.0.2")), device.updateBlocking(), "the floor was reset by key set 2")
        val older = site.save()
        site.publish("1.0.3", site.k2)
        device.updateBlocking()
        assertEquals("1.0.3", device.installed("m")?.version)

        site.restore(older)
        val replayed = assertRaises<ClientError.Replayed> { device.updateBlocking() }
        assertEquals(3L, replayed.sequence)
        assertEquals(4L, replayed.highestAccepted)
        assertEquals("1.0.3", device.installed("m")?.version)
    }

    /**
     * A device whose current version was installed from a leaked key's 2^53 manifest keeps
     * that sequence in the version's record. After the rotation reset the floor, losing
     * `state.json` (missing its installs, deleted, corrupt) rebuilds the floor from the
     * records ([dev.modelcast.client.install.Installer.repair]): capped by the newest trusted
     * key set's floor for the channel, the genuine manifest is still accepted, by the app that
     * ships key set 1 and by a newer one that ships key set 2. The Swift client's
     * `testAFloorRebuiltFromVersionRecordsIsCappedByTheKeySetFloor`.
     */
    @Test
    fun aFloorRebuiltFromVersionRecordsIsCappedByTheKeySetFloor() = site().use { site ->
        site.publish("1.0.0", site.k1)
        site.createKeySet()
        val genuine = site.save()
        val huge = 1L shl 53
        site.forge(site.k1, huge)
        val device = site.device("e")
        assertEquals(UpdateOutcome.Updated(huge, mapOf("m" to "1.0.0")), device.updateBlocking(), "installed from the leaked key's manifest")
        site.restore(genuine)

        // Rotation (floor = the live sequence, 1), and the live release re-signed by K2.
        site.rotateToK2()
        site.modelcast("resign", site.root.path, "--sign", site.k2.secret.path)
        assertEquals(UpdateOutcome.UpToDate(2), device.updateBlocking(), "the floor was reset by key set 2")

        val statePath = File(site.work, "e/state.json")
        val keySet2 = File(site.root, "keys/2.json").readBytes()
        val withoutInstalls = ClientState.load(statePath.toPath()).copy(installed = emptyMap())
        assertEquals(2L, withoutInstalls.keySet?.version, "the state keeps key set 2")
        val damages = listOf<Triple<String, ByteArray?, () -> Unit>>(
            Triple("state.json without its installs", null, { withoutInstalls.save(statePath.toPath()) }),
            Triple("state.json deleted, app ships key set 2", keySet2, { assertTrue(statePath.delete()) }),
            Triple("state.json corrupt, app ships key set 2", keySet2, { statePath.writeText("{not json") }))
        for ((label, shipping, damage) in damages) {
            damage()
            val relaunched = site.device("e", shipping)
            val outcome = try { relaunched.updateBlocking() } catch (error: ClientError) {
                throw AssertionError("$label: the genuine manifest was refused: ${error.message}", error)
            }
            assertEquals(UpdateOutcome.UpToDate(2), outcome, label)
            assertEquals("1.0.0", relaunched.installed("m")?.version, label)
        }
    }

    /**
     * A private S3 bucket without list permission answers 403 for a missing object: a missing
     * `keys/(N+1).json` ends the chain as a 404 does, and a missing `manifest.json.sigs` (one
     * signer) means no signatures besides the `.minisig`, or a key set target on such a bucket
     * could never be updated from. A refused link is still refused.
     */
    @Test
    fun aForbiddenMissingKeySetEndsTheChainAsANotFoundDoes() = site(missingStatus = 403).use { site ->
        site.publish("1.0.0", site.k1)
        site.createKeySet()
        val device = site.device("p")
        assertEquals(UpdateOutcome.Updated(1, mapOf("m" to "1.0.0")), device.updateBlocking())
        assertTrue(site.server.requests.containsAll(listOf("/site/keys/2.json 403", "/site/manifest.json.sigs 403")), "${site.server.requests}")

        site.rotateToK2()
        site.publish("1.0.1", site.k2)
        assertEquals(UpdateOutcome.Updated(2, mapOf("m" to "1.0.1")), device.updateBlocking())
        assertTrue(site.server.requests.contains("/site/keys/3.json 403"), "${site.server.requests}")

        // keys/3.json without its .sigs (403): refused as a missing list is, not the chain's end.
        val keySet2 = File(site.root, "keys/2.json").readText()
        File(site.root, "keys/3.json").writeText(keySet2.replace("\"version\": 2", "\"version\": 3"))
        val refused = assertRaises<ClientError.KeySetRefused> { device.updateBlocking() }
        assertEquals(3L, refused.version)
        assertTrue(refused.reason.contains("keys/3.json.sigs"), refused.reason)
        assertEquals("1.0.1", device.installed("m")?.version)
    }

    /**
     * Under a key set the manifest is proven by its inline signature and by
     * `manifest.json.minisig` and `manifest.json.sigs` (both read beside an inline signature,
     * as they may hold other signers'), any of which may be missing as long as the threshold
     * is met; with none, it is unsigned. The Swift client reads the same files the same way
     * (`provenByThreshold`).
     */
    @Test
    fun aManifestUnderAKeySetIsProvenByItsInlineSignatureOrItsSignatureList() = site().use { site ->
        site.createKeySet(listOf(site.k1, site.k2), manifestThreshold = 1)
        site.publish("1.0.0", site.k2, inline = true)
        assertTrue(File(site.root, "manifest.json.minisig").delete())
        val device = site.device("i")
        assertEquals(UpdateOutcome.Updated(1, mapOf("m" to "1.0.0")), device.updateBlocking(), "proven by the inline signature")
        assertTrue(site.server.requests.containsAll(listOf("/site/manifest.json.minisig 404", "/site/manifest.json.sigs 404")), "${site.server.requests}")

        site.rotate("--manifest-threshold", "2")
        site.publish("1.0.1", site.k1, site.k2)
        assertTrue(File(site.root, "manifest.json.minisig").delete())
        site.server.requests.clear()
        assertEquals(UpdateOutcome.Updated(2, mapOf("m" to "1.0.1")), device.updateBlocking(), "proven by the two signatures of manifest.json.sigs")
        assertTrue(site.server.requests.containsAll(listOf("/site/manifest.json.minisig 404", "/site/manifest.json.sigs 200")), "${site.server.requests}")

        assertTrue(File(site.root, "manifest.json.sigs").delete())
        assertRaises<ClientError.Unsigned> { site.device("j").updateBlocking() }
        assertEquals(emptyList<String>(), site.models("j"), "nothing installed")
    }
}
