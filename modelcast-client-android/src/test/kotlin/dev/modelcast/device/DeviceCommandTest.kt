package dev.modelcast.device

import dev.modelcast.client.Publisher
import dev.modelcast.client.StaticServer
import dev.modelcast.client.format.Json
import dev.modelcast.client.format.JsonValue
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import java.io.File
import java.nio.file.Path
import java.util.concurrent.TimeUnit

/**
 * The example device end to end: its launcher (`modelcast-client-android/device`) run as a
 * process, as the conformance kit and walkthrough.sh run it, against a local static server.
 */
class DeviceCommandTest {
    private val server = StaticServer()
    private val publisher = Publisher(server)

    @TempDir
    lateinit var temporary: Path

    @AfterEach
    fun stop() = server.close()

    private class Run(val status: Int, val stdout: String, val stderr: String) {
        val lastError: String get() = stderr.trimEnd().lines().last()
    }

    private fun device(vararg arguments: String): Run {
        val launcher = File(System.getProperty("modelcast.repository"), "modelcast-client-android/device")
        val process = ProcessBuilder(listOf(launcher.path) + arguments).directory(temporary.toFile()).start()
        process.outputStream.close()
        val stdout = process.inputStream.bufferedReader().readText()
        val stderr = process.errorStream.bufferedReader().readText()
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "the device did not end")
        return Run(process.exitValue(), stdout, stderr)
    }

    private val directory: String get() = File(temporary.toFile(), "client").path
    private val manifest: String get() = server.base + "/manifest.json"

    @Test
    fun stateOfADirectoryInitNeverConfiguredExits3AndCreatesNothing() {
        val run = device("state", "--dir", directory)
        assertEquals(3, run.status, run.stderr)
        assertTrue(run.lastError.startsWith("modelcast-device: ") && run.lastError.contains("no configuration"), run.stderr)
        assertFalse(File(directory).exists())
    }

    @Test
    fun initRefusesABadValueNamingItAndWritesNothing() {
        val run = device("init", "--dir", directory, "--manifest-url", manifest, "--min-rate", "1k")
        assertEquals(2, run.status, run.stderr)
        assertEquals("modelcast-device: --min-rate '1k' is not a number of bytes per second (decimal digits)", run.lastError)
        assertFalse(File(directory).exists())
        assertEquals(2, device("init", "--dir", directory, "--manifest-url", manifest, "--no-such-option", "x").status)
        assertEquals(2, device("init", "--dir", directory, "--manifest-url", "ftp://example.com/m.json").status)
        assertFalse(File(directory).exists())
    }

    @Test
    fun theProtocolInstallsReportsAndReverts() {
        publisher.publish(1, mapOf("m" to Pair("1.0.0", ByteArray(5000) { it.toByte() })))
        val recorded = device("init", "--dir", directory, "--manifest-url", manifest, "--device", "memory=8589934592,platform=android")
        assertEquals(0, recorded.status, recorded.stderr)
        assertEquals("recorded $directory/device.json\n", recorded.stdout)
        assertEquals(Pair(0, "updated to sequence 1: m 1.0.0\n"), device("update", "--dir", directory).let { Pair(it.status, it.stdout) })
        publisher.publish(2, mapOf("m" to Pair("1.1.0", ByteArray(6000) { (it * 3).toByte() })))
        assertEquals("updated to sequence 2: m 1.1.0\n", device("update", "--dir", directory).stdout)
        val state = Json.parse(device("state", "--dir", directory).stdout.toByteArray()) as JsonValue.Object
        assertEquals(JsonValue.Integer(1), state["protocol"])
        assertEquals(JsonValue.Integer(2), state["sequence"])
        val model = (state["models"] as JsonValue.Object)["m"] as JsonValue.Object
        assertEquals(JsonValue.Text("1.1.0"), model["version"])
        assertEquals(JsonValue.Array(listOf(JsonValue.Text("1.0.0"))), model["previous"])
        assertEquals(JsonValue.Null, model["refused"])
        val reverted = device("revert", "--dir", directory, "m", "--reason", "it crashes")
        assertEquals(Pair(0, "reverted m to 1.0.0; the version it ran is refused\n"), Pair(reverted.status, reverted.stdout))
        val again = device("revert", "--dir", directory, "m", "--reason", "still")
        assertEquals(1, again.status, again.stderr)
        assertEquals("up to date (sequence 2)\n", device("update", "--dir", directory).stdout)
    }

    @Test
    fun theOneShotFormPrintsWhatItRuns() {
        publisher.publish(1, mapOf("m" to Pair("1.0.0", ByteArray(5000) { it.toByte() })))
        val check = device("--check", "--manifest", manifest, "--dir", directory)
        assertEquals("sequence 1: m 1.0.0, 5000 bytes to download\n", check.stdout, check.stderr)
        val run = device("--manifest", manifest, "--dir", directory)
        assertEquals("updated to sequence 1: m 1.0.0\nrunning m 1.0.0: models/m/current/m.bin\n", run.stdout, run.stderr)
        assertEquals("not modified\nrunning m 1.0.0: models/m/current/m.bin\n", device("--manifest", manifest, "--dir", directory).stdout)
        val usage = device("--dir", directory)
        assertEquals(2, usage.status)
        assertTrue(usage.stderr.startsWith("modelcast-device: --manifest URL is required\nusage: modelcast-device"), usage.stderr)
    }

    @Test
    fun aRefusalExits1WithOneLineSayingWhy() {
        publisher.publish(1, mapOf("m" to Pair("1.0.0", ByteArray(10))), channel = "beta")
        assertEquals(0, device("init", "--dir", directory, "--manifest-url", manifest).status)
        val run = device("update", "--dir", directory)
        assertEquals(1, run.status, run.stderr)
        assertEquals("modelcast-device: $manifest: the manifest is channel 'beta''s, not 'stable''s", run.lastError)
    }
}
