package dev.modelcast.client.install

import dev.modelcast.client.ClientError
import dev.modelcast.client.testing.awaitLine
import dev.modelcast.client.testing.bytes
import dev.modelcast.client.testing.names
import dev.modelcast.client.testing.sha256Hex
import dev.modelcast.client.testing.startJava
import dev.modelcast.client.testing.temporaryDirectory
import dev.modelcast.client.testing.thrown
import org.junit.jupiter.api.Assertions.assertArrayEquals
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import java.nio.file.Files
import java.nio.file.Path
import java.nio.file.Paths
import java.util.Random
import java.util.concurrent.TimeUnit

/** Every test is bounded: a broken bound fails it instead of hanging the run. */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class InstallerTest {
    private val base: Path = temporaryDirectory()
    private val client: Path = base.resolve("client").also { Files.createDirectories(it) }
    private val downloads: Path = client.resolve("downloads").also { Files.createDirectories(it) }
    private val url = "https://cdn.example.com/manifest.json"

    /** A proven download of `bytes`, as the downloader leaves it. */
    private fun download(bytes: ByteArray): Pair<String, Path> {
        val sha = sha256Hex(bytes)
        return Pair(sha, downloads.resolve(sha).also { Files.write(it, bytes) })
    }

    private fun version(number: String, vararg contents: Pair<String, ByteArray>): Pair<InstallVersion, Map<String, Path>> {
        val files = contents.map { (name, bytes) -> Pair(InstallFile(name, sha256Hex(bytes), bytes.size.toLong()), download(bytes)) }
        return Pair(InstallVersion("m", number, files.map { it.first }), files.associate { it.second })
    }

    @Test
    fun aVersionIsBuiltAsLinksToItsDownloadsAndSwitchedToWithItsRecord() {
        val installer = Installer(client)
        val weights = bytes(100_000)
        val (v1, sources) = version("1.0.0", "m.gguf" to weights, "mmproj.gguf" to bytes(500))
        val built = installer.build(v1, sources, url, 7)
        assertEquals(installer.versionsDirectory("m").resolve(Installer.versionID(v1)), built)
        assertTrue(Files.isSameFile(built.resolve("m.gguf"), sources.getValue(sha256Hex(weights))), "not a second link to the download")
        assertEquals(setOf("m.gguf", "mmproj.gguf", Installer.RECORD_NAME), names(built))
        assertNull(installer.installed("m"))
        val state = installer.switchTo("m", built, ClientState(), keepPreviousVersions = 1)
        val installed = installer.installed("m")!!
        assertEquals(InstalledModel("m", "1.0.0", null, built, client.resolve("models/m/current/m.gguf")), installed)
        assertArrayEquals(weights, Files.readAllBytes(installed.mainFile))
        assertEquals(ClientState.Installed("1.0.0", built.fileName.toString(), emptyList()), state.installed["m"])
        assertEquals(VersionRecord("m", "1.0.0", "m.gguf", v1.files.map { it.sha256 }, url, 7), Installer.record(built))
        assertEquals(Paths.get("versions", built.fileName.toString()), Files.readSymbolicLink(installer.currentLink("m")))
    }

    @Test
    fun theVersionIdIsTheSwiftClientsName() {
        val (v1, _) = version("1.2.3", "a.bin" to bytes(10, 1), "b.bin" to bytes(10, 2))
        val lines = v1.files.joinToString("\n") { it.sha256 + " " + it.name }
        assertEquals("1.2.3-" + sha256Hex(lines.toByteArray()).substring(0, 12), Installer.versionID(v1))
    }

    @Test
    fun previousVersionsAreKeptUpToTheNumberAndOlderOnesDeleted() {
        val installer = Installer(client)
        var state = ClientState()
        val ids = ArrayList<String>()
        for (number in 1..4) {
            val (version, sources) = version("1.0.$number", "m.bin" to bytes(1000, number.toLong()))
            val built = installer.build(version, sources, url, number.toLong())
            state = installer.switchTo("m", built, state, keepPreviousVersions = 2)
            installer.pruneTo("m", state)
            ids.add(built.fileName.toString())
        }
        assertEquals(ClientState.Installed("1.0.4", ids[3], listOf(ids[2], ids[1])), state.installed["m"])
        assertEquals(setOf(ids[3], ids[2], ids[1]), names(installer.versionsDirectory("m")))
        // A version kept with the same artifacts is reused, not rebuilt (a rollback downloads nothing).
        val (again, _) = version("1.0.2", "m.bin" to bytes(1000, 2))
        assertEquals(installer.versionsDirectory("m").resolve(ids[1]), installer.kept(again))
        assertEquals(installer.versionsDirectory("m").resolve(ids[1]), installer.build(again, emptyMap(), url, 5))
    }

    @Test
    fun aTreeModelsFilesArePlacedAtTheirPaths() {
        val installer = Installer(client)
        val config = bytes(10, 1)
        val weights = bytes(20, 2)
        val (_, configPath) = download(config)
        val (_, weightsPath) = download(weights)
        val version = InstallVersion("m", "1.0.0", listOf(
            InstallFile("config.json", sha256Hex(config), 10, path = "config.json"),
            InstallFile("model.safetensors", sha256Hex(weights), 20, path = "weights/model.safetensors")), tree = "tiny-model")
        val built = installer.build(version, mapOf(sha256Hex(config) to configPath, sha256Hex(weights) to weightsPath), url, 1)
        assertArrayEquals(weights, Files.readAllBytes(built.resolve("tiny-model/weights/model.safetensors")))
        installer.activate("m", built)
        assertEquals(client.resolve("models/m/current/tiny-model"), installer.installed("m")!!.mainFile)
    }

    @Test
    fun aRefusedVerificationLeavesNothing() {
        val installer = Installer(client)
        val (v1, sources) = version("1.0.0", "m.bin" to bytes(10))
        val error = thrown<ClientError.BadModelSignature> {
            installer.build(v1, sources, url, 1, verify = { staged ->
                assertTrue(Files.exists(staged.resolve("m.bin")))
                throw ClientError.BadModelSignature("m", "1.0.0", "the files are not the signed ones")
            })
        }
        assertEquals("the files are not the signed ones", error.reason)
        assertEquals(emptySet<String>(), names(installer.versionsDirectory("m")))
    }

    @Test
    fun namesNoPathMayBeBuiltFromAreRefused() {
        val installer = Installer(client)
        val sha = "a".repeat(64)
        fun refused(version: InstallVersion): String =
            thrown<ClientError.InvalidManifest> { installer.build(version, emptyMap(), url, 1) }.message!!
        assertEquals("$url: model '../escape' is not a model name (letters, digits, '.', '_' and '-', at most 128, not '.' or '..')",
            refused(InstallVersion("../escape", "1.0.0", listOf(InstallFile("m.bin", sha, 1)))))
        assertEquals("$url: file name '../m.bin' contains a path separator or a character that looks like one (U+2F)",
            refused(InstallVersion("m", "1.0.0", listOf(InstallFile("../m.bin", sha, 1)))))
        assertEquals("$url: version '1.0/../../x' is not a semantic version (MAJOR.MINOR.PATCH, at most 128 characters)",
            refused(InstallVersion("m", "1.0/../../x", listOf(InstallFile("m.bin", sha, 1)))))
        assertEquals("$url: file path 'a/../../b' has a segment '..' that is made only of dots (it would name a directory above)",
            refused(InstallVersion("m", "1.0.0", listOf(InstallFile("m.bin", sha, 1, path = "a/../../b")), tree = "t")))
        assertEquals("$url: file name 'm\u202Egnp.exe' contains a control or invisible character (U+202E)".replace("\u202E", "\\u{202e}"),
            refused(InstallVersion("m", "1.0.0", listOf(InstallFile("m\u202Egnp.exe", sha, 1)))))
        assertEquals("$url: file 'M.bin' goes to the same place as another file of the model",
            refused(InstallVersion("m", "1.0.0", listOf(InstallFile("m.bin", sha, 1), InstallFile("M.bin", sha, 1)))))
        assertFalse(Files.exists(base.resolve("escape")))
    }

    @Test
    fun removeAndPruneTouchOnlyWhatTheClientMade() {
        val installer = Installer(client)
        val (v1, sources) = version("1.0.0", "m.bin" to bytes(10))
        installer.activate("m", installer.build(v1, sources, url, 1))
        // A file the client did not make: the model directory is left as it is.
        Files.write(installer.modelDirectory("m").resolve("notes.txt"), byteArrayOf(1))
        installer.remove("m")
        assertNotNull(installer.installed("m"))
        Files.delete(installer.modelDirectory("m").resolve("notes.txt"))
        installer.remove("m")
        assertFalse(Files.exists(installer.modelDirectory("m")))
        // A link planted where a version was: pruning removes the link, not what it points to.
        val outside = Files.createDirectories(base.resolve("outside"))
        Files.write(outside.resolve("precious"), byteArrayOf(1))
        installer.activate("m", installer.build(v1, sources, url, 1))
        Files.createSymbolicLink(installer.versionsDirectory("m").resolve("0.0.1-planted"), outside)
        installer.prune("m", setOf(Installer.versionID(v1)))
        assertTrue(Files.exists(outside.resolve("precious")))
        assertEquals(setOf(Installer.versionID(v1)), names(installer.versionsDirectory("m")))
    }

    @Test
    fun aLostStateIsRepairedFromTheDisk() {
        val installer = Installer(client)
        var state = ClientState()
        for (number in 1..2) {
            val (version, sources) = version("1.0.$number", "m.bin" to bytes(10, number.toLong()))
            state = installer.switchTo("m", installer.build(version, sources, url, 40L + number), state, 1)
        }
        val repaired = installer.repair(ClientState(etags = mapOf(url to "\"e\"")), url, keepPreviousVersions = 1)
        assertEquals(state.installed, repaired.installed)
        assertEquals(mapOf(url to 42L), repaired.sequences)
        assertEquals(emptyMap<String, String>(), repaired.etags)
        assertEquals(state, installer.repair(state, url, 1))
    }

    @Test
    fun aRevertGoesBackToTheKeptVersionAndRefusesTheReportedOne() {
        val installer = Installer(client)
        val statePath = client.resolve("state.json")
        var state = ClientState(etags = mapOf(url to "\"e\""))
        val built = (1..2).map { number ->
            val (version, sources) = version("1.0.$number", "m.bin" to bytes(10, number.toLong()))
            installer.build(version, sources, url, number.toLong()).also { state = installer.switchTo("m", it, state, 1) }
        }
        state.save(statePath)
        val now = installer.reportUnusable("m", "crashes on load", url, statePath)
        assertEquals("1.0.1", now.version)
        assertEquals(built[0], installer.current("m"))
        val saved = ClientState.load(statePath)
        assertEquals(ClientState.Refusal(built[1].fileName.toString(), "1.0.2", null, "crashes on load"), saved.refused["m"])
        assertEquals(ClientState.Installed("1.0.1", built[0].fileName.toString(), emptyList()), saved.installed["m"])
        assertNull(saved.etags[url])
        thrown<ClientError.NoPreviousVersion> { installer.reportUnusable("m", "again", url, statePath) }
        assertEquals(built[0], installer.current("m"))
        thrown<ClientError.NotInstalled> { installer.reportUnusable("other", "x", url, statePath) }
    }

    @Test
    fun aKilledSwitchAlwaysLeavesCurrentNamingACompleteVersion() {
        val installer = Installer(client)
        for (number in 1..2) {
            val (version, sources) = version("1.0.$number", "m.bin" to bytes(10, number.toLong()))
            installer.build(version, sources, url, number.toLong())
        }
        installer.activate("m", installer.versionsDirectory("m").resolve(installer.versions("m")[0]))
        val random = Random(1)
        val seen = HashSet<String>()
        repeat(12) {
            val child = startJava(InstallChild::class.java.name, "switch", client.toString())
            assertTrue(child.awaitLine("ready"))
            Thread.sleep(20L + random.nextInt(150))
            child.destroyForcibly().waitFor(10, TimeUnit.SECONDS)
            val installed = installer.installed("m")
            assertNotNull(installed, "no complete version after a kill")
            seen.add(installed!!.version)
        }
        assertEquals(setOf("1.0.1", "1.0.2"), seen)
        // Leftover links of interrupted switches are the client's to prune.
        installer.prune("m", installer.versions("m").toSet())
        assertEquals(setOf("current", "versions"), names(installer.modelDirectory("m")))
    }

    @Test
    fun aKilledBuildLeavesTheVersionInUseAndItsLeftoversArePruned() {
        val installer = Installer(client)
        val (v1, sources) = version("1.0.0", "m.bin" to bytes(10))
        installer.activate("m", installer.build(v1, sources, url, 1))
        Files.write(client.resolve("download.bin"), bytes(3 shl 20))
        repeat(6) {
            val child = startJava(InstallChild::class.java.name, "build", client.toString())
            assertTrue(child.awaitLine("ready"))
            Thread.sleep(100L + it * 37)
            child.destroyForcibly().waitFor(10, TimeUnit.SECONDS)
            val installed = installer.installed("m")
            assertNotNull(installed)
            assertTrue(Files.exists(installed!!.mainFile))
        }
        val inUse = installer.current("m")!!.fileName.toString()
        installer.prune("m", setOf(inUse))
        assertEquals(setOf(inUse), names(installer.versionsDirectory("m")))
    }
}
