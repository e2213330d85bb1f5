package dev.modelcast.client

import com.sun.net.httpserver.HttpServer
import dev.modelcast.client.install.ClientState
import dev.modelcast.client.testing.temporaryDirectory
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assumptions.assumeTrue
import org.junit.jupiter.api.Test
import java.io.Closeable
import java.io.File
import java.net.InetAddress
import java.net.InetSocketAddress
import java.nio.file.Files
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit

/**
 * Issue 51, layer 4b: the key set walk ([ClientConfiguration.trustedKeySet]) against a real
 * HTTP server on 127.0.0.1 serving a site the real CLI wrote (`keys create`, `keys rotate
 * --revoke`, `publish --sign`), as the Swift client's KeySetClientTests do: the vectors prove
 * the format, only a CLI-written site proves the two implementations agree on the files.
 * Needs the CLI built in this repository (`swift build --product modelcast`); without it the
 * tests are skipped, not passed (the message says so).
 */
class KeySetWalkServerTest {
    private val cli = File(System.getProperty("modelcast.repository") ?: error("run through ./build"), ".build/debug/modelcast")

    private class Key(val secret: File, val pub: File, val id: String)

    /**
     * Serves a folder as files (every request reads the disk, so a test can change the site
     * between updates); a missing file answers [missingStatus] (403 as a private S3 bucket
     * without list permission answers).
     */
    private class FolderServer(private val folder: File, private val missingStatus: Int = 404) : Closeable {
        /** Each request as `PATH STATUS`. */
        val requests = java.util.concurrent.CopyOnWriteArrayList<String>()

        private val server = HttpServer.create(InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0)

        init {
            server.executor = Executors.newCachedThreadPool { runnable -> Thread(runnable, "folder-server").apply { isDaemon = true } }
            server.createContext("/") { exchange ->
                try {
                    val file = File(folder, exchange.requestURI.path)
                    if (!file.canonicalPath.startsWith(folder.canonicalPath + File.separator) || !file.isFile) {
                        requests.add("${exchange.requestURI.path} $missingStatus")
                        exchange.sendResponseHeaders(missingStatus, -1)
                    } else {
                        requests.add("${exchange.requestURI.path} 200")
                        val body = file.readBytes()
                        exchange.sendResponseHeaders(200, body.size.toLong())
                        exchange.responseBody.write(body)
                    }
                } finally {
                    exchange.close()
                }
            }
            server.start()
        }

        val base: String get() = "http://127.0.0.1:${server.address.port}"

        override fun close() = server.stop(0)
    }

    /** A site under `site/` of a scratch folder, its server, and the four keys (roots R1, R2; manifest keys K1, K2). */
    private inner class Site(missingStatus: Int = 404) : Closeable {
        val work: File = temporaryDirectory("keyset-walk").toFile()
        val root = File(work, "site")
        val server = FolderServer(work, missingStatus)
        val base = server.base + "/site"
        val r1 = keygen("r1")
        val r2 = keygen("r2")
        val k1 = keygen("k1")
        val k2 = keygen("k2")

        /** Runs [command]; fails the test naming it and its output unless it exits 0. */
        fun run(vararg command: String): String {
            val process = ProcessBuilder(*command).redirectErrorStream(true).start()
            val output = process.inputStream.bufferedReader().readText()
            assertTrue(process.waitFor(120, TimeUnit.SECONDS), "timed out: ${command.joinToString(" ")}")
            assertEquals(0, process.exitValue(), "${command.joinToString(" ")}: $output")
            return output
        }

        fun modelcast(vararg arguments: String): String = run(cli.path, *arguments)

        fun keygen(name: String): Key {
            val secret = File(work, "$name.key")
            val pub = File(work, "$name.pub")
            val output = modelcast("keygen", "--unencrypted", "--public-key", pub.path, "--secret-key", secret.path, "--json")
            val id = Regex("\"key_id\"\\s*:\\s*\"([0-9A-Fa-f]+)\"").find(output)?.groupValues?.get(1) ?: throw AssertionError("no key_id in $output")
            return Key(secret, pub, id)
        }

        fun publish(version: String, vararg signers: Key) {
            val file = File(work, "in/$version/m.bin")
            file.parentFile.mkdirs()
            file.writeBytes(dev.modelcast.client.testing.bytes(5000, version.hashCode().toLong()))
            modelcast("publish", file.path, "--name", "m", "--version", version, "--base-url", base, "--to", root.path,
                *signers.flatMap { listOf("--sign", it.secret.path) }.toTypedArray())
        }

        /** `keys create`: roots R1 and R2 (threshold 2), manifest key K1, signed by both roots. */
        fun createKeySet() {
            modelcast("keys", "create", root.path, "--root", r1.pub.path, "--root", r2.pub.path, "--root-threshold", "2",
                "--manifest-key", k1.pub.path, "--sign-root", r1.secret.path, "--sign-root", r2.secret.path)
        }

        /** `keys rotate`: K2 in, K1 revoked, signed by both roots (key set 2). */
        fun rotateToK2() {
            modelcast("keys", "rotate", root.path, "--manifest-key", k2.pub.path, "--revoke", k1.id,
                "--sign-root", r1.secret.path, "--sign-root", r2.secret.path)
        }

        /** A device that ships [shipping] (key set 1 when null). */
        fun device(name: String, shipping: ByteArray? = null): ModelUpdater = ModelUpdater(ClientConfiguration(
            base + "/manifest.json", File(work, name), name, retries = 0, requestTimeoutSeconds = 10.0,
            trustedKeySet = shipping ?: File(root, "keys/1.json").readBytes()))

        private val manifestFiles = listOf("manifest.json", "manifest.json.minisig", "manifest.json.sigs")

        /** The served manifest's files, to put back what the CLI wrote after a forgery. */
        fun save(): Map<String, ByteArray?> = manifestFiles.associateWith { File(root, it).takeIf { file -> file.isFile }?.readBytes() }

        fun restore(saved: Map<String, ByteArray?>) {
            for ((name, bytes) in saved) {
                val file = File(root, name)
                file.delete()
                if (bytes != null) file.writeBytes(bytes)
            }
        }

        /**
         * What a holder of [key] can serve: the live manifest (its sequence set to [sequence]
         * when given) signed by [key] alone with stock minisign, with the CLI's trusted
         * comment (its sequence changed to match).
         */
        fun forge(key: Key, sequence: Long? = null) {
            val manifest = File(root, "manifest.json")
            val signature = File(root, "manifest.json.minisig")
            var comment = signature.readLines().first { it.startsWith("trusted comment: ") }.removePrefix("trusted comment: ")
            if (sequence != null) {
                manifest.writeText(Regex("\"sequence\"(\\s*):(\\s*)[0-9]+").replace(manifest.readText(), "\"sequence\"$1:$2$sequence"))
                comment = Regex("sequence:[0-9]+").replace(comment, "sequence:$sequence")
            }
            File(root, "manifest.json.sigs").delete()
            signature.delete()
            run("minisign", "-S", "-s", key.secret.path, "-m", manifest.path, "-t", comment)
        }

        fun models(device: String): List<String> = File(work, "$device/models").list()?.toList() ?: emptyList()

        override fun close() {
            server.close()
            work.deleteRecursively()
        }
    }

    private fun site(missingStatus: Int = 404): Site {
        // CI builds the CLI first and sets MODELCAST_REQUIRE_CLI=1: there a missing CLI fails.
        if (System.getenv("MODELCAST_REQUIRE_CLI") == "1") check(cli.canExecute()) { "${cli.path} is missing and MODELCAST_REQUIRE_CLI=1" }
        assumeTrue(cli.canExecute(), "${cli.path} is missing: build it with `swift build --product modelcast` (these tests are SKIPPED, not passed)")
        return Site(missingStatus)
    }

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
     * key set's `sequence_floor`, the genuine manifest is still accepted, by the app that
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
}
