package dev.modelcast.client

import dev.modelcast.client.format.DownloadPolicy
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertArrayEquals
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import java.io.File
import java.net.HttpURLConnection
import java.net.URL
import java.nio.file.Files
import java.nio.file.Path
import java.time.Instant

/** The orchestration end to end, in-process, against a local static server (no signing key: the trust tests cover signatures). */
class ModelUpdaterTest {
    private val server = StaticServer()
    private val publisher = Publisher(server)
    private val one = ByteArray(300_000) { (it * 7).toByte() }
    private val two = ByteArray(200_000) { (it * 13 + 1).toByte() }

    @TempDir
    lateinit var temporary: Path

    @AfterEach
    fun stop() = server.close()

    private fun configuration() = ClientConfiguration(server.base + "/manifest.json", File(temporary.toFile(), "client"), "device-1")

    @Test
    fun updateInstallsThenAnswersNotModified() {
        publisher.publish(1, mapOf("m" to Pair("1.0.0", one)))
        ModelUpdater(configuration()).use { updater ->
            assertEquals(UpdateOutcome.Updated(1, mapOf("m" to "1.0.0")), updater.updateBlocking())
            val model = updater.installed("m")!!
            assertEquals("1.0.0", model.version)
            assertArrayEquals(one, Files.readAllBytes(model.mainFile))
            assertEquals(UpdateOutcome.NotModified, updater.updateBlocking())
            assertEquals("GET /manifest.json If-None-Match", server.requests.last())
            val state = updater.installedStateBlocking()
            assertEquals(1L, state.sequence)
            val file = state.models.single().files.single()
            assertTrue(file.path.matches(Regex("models/m/versions/1\\.0\\.0-[0-9a-f]{12}/m\\.bin")), file.path)
            assertEquals(StaticServer.sha256(one), file.sha256)
        }
    }

    @Test
    fun aLowerSequenceIsRefusedAsAReplay() {
        publisher.publish(2, mapOf("m" to Pair("2.0.0", two)))
        ModelUpdater(configuration()).use { updater ->
            updater.updateBlocking()
            publisher.publish(1, mapOf("m" to Pair("1.0.0", one)))
            val error = assertRaises<ClientError.Replayed> { updater.updateBlocking() }
            assertEquals(2L, error.highestAccepted)
            assertEquals("2.0.0", updater.installed("m")!!.version)
        }
    }

    @Test
    fun reportUnusableGoesBackAndRefusesTheVersionUntilAnotherIsNamed() {
        publisher.publish(1, mapOf("m" to Pair("1.0.0", one)))
        ModelUpdater(configuration()).use { updater ->
            updater.updateBlocking()
            publisher.publish(2, mapOf("m" to Pair("2.0.0", two)))
            updater.updateBlocking()
            assertEquals("1.0.0", updater.reportUnusableBlocking("m", "it crashes").version)
            val plan = updater.checkBlocking()!!
            assertEquals("2.0.0", plan.refused.getValue("m").version)
            assertEquals("it crashes", plan.refused.getValue("m").reason)
            assertEquals(UpdateOutcome.UpToDate(2), updater.updateBlocking())
            val model = updater.installedStateBlocking().models.single()
            assertEquals(Pair("1.0.0", "2.0.0"), Pair(model.version, model.refused))
            publisher.publish(3, mapOf("m" to Pair("2.0.1", two)))
            assertEquals(UpdateOutcome.Updated(3, mapOf("m" to "2.0.1")), updater.updateBlocking())
            assertNull(updater.installedStateBlocking().models.single().refused)
        }
    }

    @Test
    fun anUpdateTheAppDefersDownloadsNothing() {
        publisher.publish(1, mapOf("m" to Pair("1.0.0", one)))
        var asked: UpdatePlan? = null
        ModelUpdater(configuration().copy(shouldDownload = { plan -> asked = plan; false })).use { updater ->
            val outcome = updater.updateBlocking() as UpdateOutcome.Deferred
            assertEquals(one.size.toLong(), outcome.plan.bytesToDownload)
            assertEquals(outcome.plan, asked)
            assertNull(updater.installed("m"))
            assertFalse(server.requests.any { it.contains("m.bin") }, server.requests.toString())
        }
    }

    @Test
    fun anExpiredManifestIsRefusedNamingItsExpiry() {
        publisher.publish(1, mapOf("m" to Pair("1.0.0", one)), expiresAt = Instant.parse("2026-02-01T00:00:00Z"))
        val late = configuration().copy(clock = { Instant.parse("2026-02-01T00:00:01Z") })
        ModelUpdater(late).use { updater ->
            val error = assertRaises<ClientError.Expired> { updater.updateBlocking() }
            assertEquals("2026-02-01T00:00:00Z", error.expiresAt)
            assertNull(updater.installed("m"))
        }
    }

    @Test
    fun anotherChannelsManifestIsRefused() {
        publisher.publish(1, mapOf("m" to Pair("1.0.0", one)), channel = "beta")
        ModelUpdater(configuration()).use { updater ->
            val error = assertRaises<ClientError.WrongChannel> { updater.updateBlocking() }
            assertEquals(Pair("stable", "beta"), Pair(error.expected, error.actual))
        }
    }

    @Test
    fun progressListenersSeeTheWholeUpdate() {
        publisher.publish(1, mapOf("a" to Pair("1.0.0", one), "b" to Pair("1.0.0", two)))
        val seen = ArrayList<UpdateProgress>()
        ModelUpdater(configuration()).use { updater ->
            updater.addProgressListener(object : ProgressListener {
                override fun onProgress(progress: UpdateProgress) { seen.add(progress) }
            })
            updater.updateBlocking()
        }
        val total = (one.size + two.size).toLong()
        assertTrue(seen.all { it.totalBytes == total }, seen.toString())
        assertEquals(total, seen.last().completedBytes)
        assertEquals(seen.map { it.completedBytes }.sorted(), seen.map { it.completedBytes })
    }

    @Test
    fun policiesDecideWhatAnUpdateCovers() {
        publisher.publish(1, mapOf("small" to Pair("1.0.0", one), "big" to Pair("1.0.0", two)))
        val policies = mapOf("small" to DownloadPolicy.ESSENTIAL, "big" to DownloadPolicy.ON_DEMAND)
        ModelUpdater(configuration().copy(downloadPolicies = policies)).use { updater ->
            assertEquals(UpdateOutcome.Updated(1, mapOf("small" to "1.0.0")), updater.updateBlocking(DownloadPolicy.PREFETCH))
            assertNull(updater.installed("big"))
            assertEquals("1.0.0", updater.requestBlocking("big").version)
            assertRaises<ClientError.UnknownModel> { updater.requestBlocking("other") }
        }
    }

    @Test
    fun everyRequestGoesThroughTheAppsConnectionSeam() {
        publisher.publish(1, mapOf("m" to Pair("1.0.0", one)))
        val opened = ArrayList<String>()
        val seam: (URL) -> HttpURLConnection = { url -> opened.add(url.path); url.openConnection() as HttpURLConnection }
        ModelUpdater(configuration(), seam).use { updater -> updater.updateBlocking() }
        assertEquals(listOf("/manifest.json", "/m/1.0.0/m.bin"), opened)
    }

    @Test
    fun cancellingTheCoroutineStopsAStalledDownloadAtOnce() {
        publisher.publish(1, mapOf("m" to Pair("1.0.0", one)))
        server.stall("/m/1.0.0/m.bin")
        ModelUpdater(configuration()).use { updater ->
            val started = System.nanoTime()
            runBlocking {
                val update = async { updater.update() }
                withTimeout(10_000) { while (server.requests.none { it.contains("m.bin") }) delay(20) }
                update.cancel()
                val ended = try { update.await(); null } catch (cancelled: CancellationException) { cancelled }
                assertTrue(ended != null, "the update ended without its cancellation")
            }
            // The idle timeout is 30 s: only the cancellation ends the request this soon.
            assertTrue(System.nanoTime() - started < 10_000_000_000L, "took ${(System.nanoTime() - started) / 1_000_000} ms")
            assertNull(updater.installed("m"))
        }
    }
}
