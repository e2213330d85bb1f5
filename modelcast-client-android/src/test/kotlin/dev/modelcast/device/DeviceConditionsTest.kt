package dev.modelcast.device

import dev.modelcast.client.Publisher
import dev.modelcast.client.StaticServer
import dev.modelcast.client.format.Json
import dev.modelcast.client.format.JsonValue
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import java.io.File
import java.nio.file.Path
import java.util.concurrent.TimeUnit

/** The example device's issue-50 options (CLIENT-CLI.md section D), run as a process against a local server. */
class DeviceConditionsTest {
    private val server = StaticServer()
    private val publisher = Publisher(server)

    @TempDir
    lateinit var temporary: Path

    @AfterEach
    fun stop() = server.close()

    private class Run(val status: Int, val stdout: String, val stderr: String)

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
    private fun artifactRequests(model: String) = server.requests.count { it.startsWith("GET /$model/") }
    private fun state(): JsonValue.Object = Json.parse(device("state", "--dir", directory).stdout.toByteArray()) as JsonValue.Object
    private fun installed(model: String): JsonValue? = (state()["models"] as JsonValue.Object)[model]

    @Test
    fun aLicenceGateWaitsUntilAcceptedAndStateShowsTheAcceptance() {
        val licence = """"licence":{"spdx":"Llama-3.2-Community","url":"https://example.com/LICENSE.txt","acceptance":"required"}"""
        publisher.publish(1, mapOf("m" to Pair("1.0.0", ByteArray(5000) { it.toByte() })), extra = mapOf("m" to licence))
        assertEquals(0, device("init", "--dir", directory, "--manifest-url", server.base + "/manifest.json").status)
        val waiting = device("update", "--dir", directory)
        assertEquals(0, waiting.status, waiting.stderr)
        assertEquals("waiting: m: licence Llama-3.2-Community (https://example.com/LICENSE.txt) not accepted\n", waiting.stderr)
        assertEquals(null, installed("m"))
        assertEquals(null, state()["licences"])
        val requested = device("update", "--dir", directory, "--request", "m")
        assertEquals(1, requested.status, requested.stderr)
        assertTrue(requested.stderr.contains("Llama-3.2-Community"), requested.stderr)
        assertEquals(0, artifactRequests("m"), server.requests.toString())
        val accepted = device("update", "--dir", directory, "--accept-licence", "m")
        assertEquals(Pair(0, "updated to sequence 1: m 1.0.0\n"), Pair(accepted.status, accepted.stdout), accepted.stderr)
        val licences = state()["licences"] as JsonValue.Object
        assertEquals(JsonValue.Text("https://example.com/LICENSE.txt"), (licences["m"] as JsonValue.Object)["url"])
    }

    @Test
    fun conditionsFromTheCommandLineAndTheBudgetFromInit() {
        publisher.publish(1, mapOf("u" to Pair("1.0.0", ByteArray(5000) { it.toByte() }), "c" to Pair("1.0.0", ByteArray(5000) { (it * 3).toByte() })),
            extra = mapOf("u" to """"download_conditions":{"network":"unmetered"}""", "c" to """"download_conditions":{"charging":"required"}"""))
        assertEquals(2, device("init", "--dir", directory, "--manifest-url", server.base + "/manifest.json", "--storage-budget", "-1").status)
        assertEquals(0, device("init", "--dir", directory, "--manifest-url", server.base + "/manifest.json", "--storage-budget", "1000000").status)
        assertTrue(File(directory, "device.json").readText().contains("\"storage-budget\": \"1000000\""))
        assertEquals(2, device("update", "--dir", directory, "--network", "wifi").status)
        assertEquals(2, device("update", "--dir", directory, "--charging", "maybe").status)
        val cellular = device("update", "--dir", directory, "--network", "cellular", "--charging", "no")
        assertEquals(0, cellular.status, cellular.stderr)
        assertEquals("waiting: c: needs the device to be charging\nwaiting: u: needs an unmetered network (the device is on cellular)\n", cellular.stderr)
        assertEquals(0, artifactRequests("u") + artifactRequests("c"))
        val unmetered = device("update", "--dir", directory, "--network", "unmetered", "--charging", "yes", "--in-use", "u")
        assertEquals(Pair(0, "updated to sequence 1: c 1.0.0, u 1.0.0\n"), Pair(unmetered.status, unmetered.stdout), unmetered.stderr)
    }

    @Test
    fun overTheBudgetExits1NamingWhatWouldHaveToGo() {
        publisher.publish(1, mapOf("e" to Pair("1.0.0", ByteArray(8000) { it.toByte() }), "o" to Pair("1.0.0", ByteArray(4000) { (it * 5).toByte() })),
            extra = mapOf("e" to """"download":"essential"""", "o" to """"download":"on-demand""""))
        assertEquals(0, device("init", "--dir", directory, "--manifest-url", server.base + "/manifest.json", "--storage-budget", "10000").status)
        assertEquals(0, device("update", "--dir", directory, "--policy", "essential").status)
        val refused = device("update", "--dir", directory, "--request", "o")
        assertEquals(1, refused.status, refused.stderr)
        assertTrue(refused.stderr.contains("'e' would have to go"), refused.stderr)
        assertEquals(0, artifactRequests("o"))
    }
}
