package dev.modelcast.client.install

import dev.modelcast.client.ClientError
import dev.modelcast.client.testing.awaitLine
import dev.modelcast.client.testing.names
import dev.modelcast.client.testing.startJava
import dev.modelcast.client.testing.temporaryDirectory
import dev.modelcast.client.testing.thrown
import dev.modelcast.client.testing.timed
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import java.nio.file.Files
import java.util.concurrent.TimeUnit

/** Every test is bounded: a broken bound fails it instead of hanging the run. */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class StateAndLockTest {
    private val directory = temporaryDirectory()

    @Test
    fun theStateRoundTripsAndIsWrittenWhole() {
        val state = ClientState(
            sequences = mapOf("https://cdn/manifest.json" to 9007199254740992L),
            etags = mapOf("https://cdn/manifest.json" to "\"abc\\\"\u0001\""),
            coverage = mapOf("https://cdn/manifest.json" to ClientState.Coverage("on-demand", "d1g3st")),
            trusted = mapOf("https://cdn/manifest.json" to ClientState.Trusted("2030-01-01T00:00:00Z"), "other" to ClientState.Trusted(null)),
            installed = mapOf("m" to ClientState.Installed("1.0.0", "1.0.0-abcdef012345", listOf("0.9.0-000000000000"))),
            refused = mapOf("m" to ClientState.Refusal("1.1.0-111111111111", "1.1.0", "small", "crashes \"here\"\n")))
        val path = directory.resolve("state.json")
        state.save(path)
        assertEquals(state, ClientState.load(path))
        assertEquals(setOf("state.json"), names(directory))
        state.copy(etags = emptyMap()).save(path)
        assertEquals(emptyMap<String, String>(), ClientState.load(path).etags)
    }

    @Test
    fun missingFieldsReadAsEmptyAndGarbageIsUnreadable() {
        val path = directory.resolve("state.json")
        assertEquals(ClientState(), ClientState.load(path))
        // A state written by an older client: no coverage, no trusted, an entry without previous, unknown fields.
        Files.write(path, """{"sequences": {"u": 3}, "installed": {"m": {"version": "1.0.0", "id": "1.0.0-x"}, "bad": {"version": "2"}},
            "future": [1, 2.5, null, true], "refused": {}}""".toByteArray())
        val state = ClientState.load(path)
        assertEquals(mapOf("u" to 3L), state.sequences)
        assertEquals(mapOf("m" to ClientState.Installed("1.0.0", "1.0.0-x", emptyList())), state.installed)
        for (garbage in listOf("{\"sequences\": {\"u\": \"three\"}}", "{not json", "[]", "{\"a\": 1} trailing", "{\"a\": 1, \"a\": 2}", "[".repeat(100) + "]".repeat(100))) {
            Files.write(path, garbage.toByteArray())
            val error = thrown<ClientError.Io> { ClientState.load(path) }
            assertTrue(error.reason.startsWith("unreadable state"), error.reason)
        }
    }

    @Test
    fun aSecondHolderWaitsAtMostItsTimeout() {
        val first = DirectoryLock.acquire(directory, 0.0)
        assertTrue(DirectoryLock.isHeldInThisProcess(directory))
        val (error, seconds) = timed { thrown<ClientError.DirectoryBusy> { DirectoryLock.acquire(directory, 0.3) } }
        assertTrue(seconds in 0.3..1.0, "waited $seconds s")
        assertEquals("$directory is held by another process (waited 0 s)", error.message)
        Thread { Thread.sleep(200); first.release() }.start()
        DirectoryLock.acquire(directory, 5.0).release()
        assertFalse(DirectoryLock.isHeldInThisProcess(directory))
    }

    @Test
    fun anotherProcessHoldsTheLockUntilItDiesEvenByKill() {
        val child = startJava(InstallChild::class.java.name, "lock", directory.toString())
        try {
            assertTrue(child.awaitLine("ready"))
            thrown<ClientError.DirectoryBusy> { DirectoryLock.acquire(directory, 0.2) }
        } finally {
            child.destroyForcibly().waitFor(10, TimeUnit.SECONDS)
        }
        DirectoryLock.acquire(directory, 2.0).release()
    }
}
