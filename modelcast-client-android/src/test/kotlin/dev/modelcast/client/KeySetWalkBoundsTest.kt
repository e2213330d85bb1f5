package dev.modelcast.client

import dev.modelcast.client.install.ClientState
import dev.modelcast.client.testing.timed
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.io.File
import java.io.IOException
import java.time.Duration
import java.time.Instant
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicLong

/**
 * Issue 51's hostile chains, against a CLI-written site on 127.0.0.1 ([KeySetSite]): an
 * expired newest key set, a version gap, a huge, endless or trickling `keys/2.json`, and a
 * chain longer than one check may walk. Each is refused within its documented bound (64 KiB
 * per document, the metadata deadline, 32 versions per check) and nothing is installed.
 */
class KeySetWalkBoundsTest {
    private fun site(): KeySetSite = KeySetSite.start()

    /** A key set expires; only the newest one reached must be fresh (an intermediate one was superseded). */
    @Test
    fun anExpiredNewestKeySetIsRefusedAndAnExpiredIntermediateOneIsNot() = site().use { site ->
        site.publish("1.0.0", site.k1)
        site.createKeySet()  // expires in 365 days
        val late = Instant.now().plus(Duration.ofDays(400))
        val error = assertRaises<ClientError.KeySetRefused> { site.device("late", clock = { late }).updateBlocking() }
        assertEquals("keys/1.json", error.path)
        assertEquals(1L, error.version)
        assertTrue(error.reason.contains("expired"), error.reason)
        assertEquals(emptyList<String>(), site.models("late"), "nothing installed")

        site.rotate("--expires-in", "800d")
        assertEquals(UpdateOutcome.Updated(1, mapOf("m" to "1.0.0")), site.device("late", clock = { late }).updateBlocking(),
            "key set 1 expired, but key set 2 replaced it and is fresh")
    }

    /** `keys/2.json` whose document is version 3 (properly signed by the roots, for version 3) is refused, not skipped to. */
    @Test
    fun aVersionGapIsRefused() = site().use { site ->
        site.publish("1.0.0", site.k1)
        site.createKeySet()
        site.rotate()
        val out = File(site.work, "out")
        site.rotate("--out", out.path)  // keys/3.json, not on the site
        for (suffix in listOf("", ".minisig", ".sigs")) {
            File(out, "keys/3.json$suffix").copyTo(File(site.root, "keys/2.json$suffix"), overwrite = true)
        }
        assertTrue(File(site.root, "keys/2.json").readText().contains("\"version\": 3"))
        val error = assertRaises<ClientError.KeySetRefused> { site.device("gap").updateBlocking() }
        assertEquals("keys/2.json", error.path)
        assertEquals(2L, error.version)
        assertTrue(error.reason.contains("3"), error.reason)
        assertTrue(site.server.requests.none { it.startsWith("/site/keys/3.json") || it.startsWith("/site/manifest.json") },
            "the walk stopped at the gap: ${site.server.requests}")
        assertEquals(emptyList<String>(), site.models("gap"), "nothing installed")
    }

    /**
     * A `keys/2.json` of 10 MB (announced by its Content-Length) is refused before its body is
     * read, and one without an end (chunked) after 64 KiB + 1 byte: either way the connection
     * is closed at once (the server's writes fail), the error names the limit, nothing is
     * installed.
     */
    @Test
    fun aHugeOrEndlessKeySetIsReadNoFurtherThan64KiB() = site().use { site ->
        site.publish("1.0.0", site.k1)
        site.createKeySet()
        for (endless in listOf(false, true)) {
            val written = AtomicLong()
            val ended = CountDownLatch(1)
            site.server.misbehave("/site/keys/2.json") { exchange ->
                try {
                    val chunk = ByteArray(4096) { ' '.toByte() }
                    if (endless) {
                        exchange.sendResponseHeaders(200, 0)  // chunked, no length
                        while (written.get() < (1L shl 30)) {
                            exchange.responseBody.write(chunk)
                            exchange.responseBody.flush()
                            written.addAndGet(chunk.size.toLong())
                        }
                    } else {
                        exchange.sendResponseHeaders(200, 10_000_000)
                        exchange.responseBody.write(chunk)
                        exchange.responseBody.flush()
                        written.addAndGet(chunk.size.toLong())
                        Thread.sleep(20_000)
                    }
                } catch (hungUp: IOException) {
                } finally {
                    ended.countDown()
                }
            }
            val name = if (endless) "endless" else "huge"
            val (error, seconds) = timed { assertRaises<ClientError.TooLarge> { site.device(name).updateBlocking() } }
            assertEquals("key set", error.objectName, name)
            assertEquals(65_536L, error.limit, name)
            assertTrue(seconds < 5, "$name: took $seconds s")
            if (endless) {
                assertTrue(ended.await(5, TimeUnit.SECONDS), "the client is still reading the endless key set")
                // What the client read is bounded by the limit (HttpStreamTest); what the server
                // could write besides is what the socket buffers held when the client hung up.
                assertTrue(written.get() < (16L shl 20), "the server wrote ${written.get()} bytes")
            }
            assertEquals(emptyList<String>(), site.models(name), "$name: nothing installed")
        }
    }

    /** A `keys/2.json` that trickles a byte at a time, never ending, is abandoned at the metadata deadline. */
    @Test
    fun aTricklingKeySetIsAbandonedAtTheMetadataDeadline() = site().use { site ->
        site.publish("1.0.0", site.k1)
        site.createKeySet()
        site.server.misbehave("/site/keys/2.json") { exchange ->
            exchange.sendResponseHeaders(200, 0)
            for (i in 0 until 600) {
                exchange.responseBody.write(' '.toInt())
                exchange.responseBody.flush()
                Thread.sleep(100)
            }
        }
        val (error, seconds) = timed { assertRaises<ClientError.DeadlineExceeded> { site.device("slow", metadataDeadlineSeconds = 2.0).updateBlocking() } }
        assertTrue(error.url.endsWith("/site/keys/2.json"), error.url)
        assertTrue(seconds < 6, "took $seconds s")
        assertEquals(emptyList<String>(), site.models("slow"), "nothing installed")
    }

    /**
     * Key sets 2…40 (K1 revoked by 40, the live manifest signed by K2): the first check walks
     * 32 versions (to 33), keeps them, and refuses the manifest under key set 33; the next
     * check continues from 33 and installs it. Bounded work per check, and a long chain is
     * still followed.
     */
    @Test
    fun aChainLongerThan32VersionsIsWalked32PerCheck() = site().use { site ->
        site.publish("1.0.0", site.k1)
        site.createKeySet()
        val device = site.device("long")
        assertEquals(UpdateOutcome.Updated(1, mapOf("m" to "1.0.0")), device.updateBlocking())
        for (version in 2..39) site.rotate()
        site.rotateToK2()
        assertTrue(File(site.root, "keys/40.json").isFile)
        site.publish("1.0.1", site.k2)

        site.server.requests.clear()
        val refused = assertRaises<ClientError.ManifestThresholdNotMet> { device.updateBlocking() }
        assertEquals(33L, refused.keySetVersion)
        val first = site.server.requests.filter { it.startsWith("/site/keys/") && it.endsWith(".json 200") }
        assertEquals((2..33).map { "/site/keys/$it.json 200" }, first, "the first check walks 32 versions")
        assertEquals(33L, ClientState.load(File(site.work, "long/state.json").toPath()).keySet?.version, "the verified prefix is kept")
        assertEquals("1.0.0", device.installed("m")?.version)

        site.server.requests.clear()
        assertEquals(UpdateOutcome.Updated(2, mapOf("m" to "1.0.1")), device.updateBlocking())
        val second = site.server.requests.filter { it.startsWith("/site/keys/") && !it.contains(".sigs") }
        assertEquals((34..40).map { "/site/keys/$it.json 200" } + "/site/keys/41.json 404", second, "the next check continues from 33")
        assertEquals(40L, ClientState.load(File(site.work, "long/state.json").toPath()).keySet?.version)
    }
}
