package dev.modelcast.client.net

import com.sun.net.httpserver.HttpExchange
import dev.modelcast.client.ClientError
import dev.modelcast.client.testing.ObjectServer
import dev.modelcast.client.testing.bytes
import dev.modelcast.client.testing.names
import dev.modelcast.client.testing.sha256Hex
import dev.modelcast.client.testing.temporaryDirectory
import dev.modelcast.client.testing.thrown
import org.junit.jupiter.api.Assertions.assertArrayEquals
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import java.io.ByteArrayOutputStream
import java.nio.file.Files
import java.nio.file.Path
import java.util.Random

/** Every test is bounded: a broken bound fails it instead of hanging the run. */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SegmentedBuildTest {
    /** 40 segments of 1 000 to 40 000 bytes; the new file changes segments 3, 4, 20 and 39 and moves the rest. */
    private val oldPieces: List<ByteArray>
    private val newPieces: List<ByteArray>

    init {
        val random = Random(3)
        oldPieces = (0 until 40).map { bytes(1000 + random.nextInt(39_000), seed = it.toLong()) }
        newPieces = oldPieces.mapIndexed { index, piece -> if (index in setOf(3, 4, 20, 39)) bytes(piece.size + 17, seed = 1000L + index) else piece }
            .let { listOf(bytes(5000, seed = 99)) + it } // an inserted first segment shifts every offset
    }

    private fun join(pieces: List<ByteArray>): ByteArray = ByteArrayOutputStream().also { out -> pieces.forEach { out.write(it) } }.toByteArray()
    private val old = join(oldPieces)
    private val new = join(newPieces)

    private fun layout(pieces: List<ByteArray>): SegmentLayout {
        var offset = 0L
        val segments = pieces.map { piece -> Segment(offset, piece.size, sha256Hex(piece)).also { offset += piece.size } }
        return SegmentLayout(segments, offset, sha256Hex(join(pieces)))
    }

    private val newLayout = layout(newPieces)
    private val plan = SegmentPlan.of(newLayout, SegmentPlan.offsets(layout(oldPieces)))

    /** Serves `new` by ranges; `tamper` may change a response's bytes (by request number). */
    private fun serve(server: ObjectServer, tamper: (Int, ByteArray) -> ByteArray = { _, bytes -> bytes }, ignoreRange: Boolean = false) {
        var count = 0
        server.overrides["/new.bin"] = { exchange: HttpExchange ->
            val number = ++count
            val range = Regex("bytes=(\\d+)-(\\d+)").matchEntire(exchange.requestHeaders.getFirst("Range") ?: "")
            if (range == null || ignoreRange) {
                exchange.sendResponseHeaders(200, new.size.toLong())
                exchange.responseBody.write(new)
            } else {
                val start = range.groupValues[1].toInt()
                val end = range.groupValues[2].toInt()
                val body = tamper(number, new.copyOfRange(start, end + 1))
                exchange.responseHeaders.add("Content-Range", "bytes $start-$end/${new.size}")
                exchange.sendResponseHeaders(206, body.size.toLong())
                exchange.responseBody.write(body)
            }
            true
        }
    }

    private fun <T> build(server: ObjectServer, part: Path, body: (SegmentedBuild.Outcome) -> T): T {
        val seedFile = temporaryDirectory().resolve("old.bin").also { Files.write(it, old) }
        return HttpStream().use { http ->
            PositionalFile.openForReading(seedFile).use { seed ->
                body(SegmentedBuild(http).build(plan, newLayout, server.url("/new.bin"), seed, part))
            }
        }
    }

    @Test
    fun aBuildFetchesOnlyTheChangedSegmentsAndCopiesTheRest() {
        assertEquals(4, plan.requests) // the inserted segment, 3-4, 20, 39 (shifted by one)
        ObjectServer().use { server ->
            serve(server)
            val part = temporaryDirectory().resolve("x.delta")
            build(server, part) { outcome ->
                assertEquals(SegmentedBuild.Outcome.Built(plan.fetchedBytes, 4, 0), outcome)
                assertArrayEquals(new, Files.readAllBytes(part))
                val ranges = server.requestsFor("/new.bin").map { it.headers["range"] }
                assertEquals("bytes=0-4999", ranges[0]) // the first run alone, before anything else
                assertEquals(4, ranges.size)
                assertTrue(plan.fetchedBytes < new.size / 4)
            }
        }
    }

    @Test
    fun aDamagedSegmentIsFetchedOnceMoreAndTwiceDamagedEndsTheBuild() {
        ObjectServer().use { server ->
            serve(server, tamper = { number, bytes -> if (number == 2) bytes.copyOf().also { it[3] = (it[3] + 1).toByte() } else bytes })
            val part = temporaryDirectory().resolve("x.delta")
            build(server, part) { outcome ->
                assertEquals(5, (outcome as SegmentedBuild.Outcome.Built).requests)
                assertArrayEquals(new, Files.readAllBytes(part))
            }
        }
        ObjectServer().use { server ->
            serve(server, tamper = { number, bytes -> if (number >= 2) bytes.copyOf().also { it[3] = (it[3] + 1).toByte() } else bytes })
            build(server, temporaryDirectory().resolve("x.delta")) { outcome ->
                assertTrue((outcome as SegmentedBuild.Outcome.FallBack).reason.contains("failed its SHA-256 twice"), outcome.reason)
            }
        }
    }

    @Test
    fun aServerThatIgnoresRangeGivesTheWholeFileAtOnce() {
        ObjectServer().use { server ->
            serve(server, ignoreRange = true)
            val part = temporaryDirectory().resolve("x.delta")
            build(server, part) { outcome ->
                assertEquals(SegmentedBuild.Outcome.Whole(new.size.toLong()), outcome)
                assertArrayEquals(new, Files.readAllBytes(part))
                assertEquals(1, server.requestsFor("/new.bin").size)
            }
        }
    }

    @Test
    fun aRangeAnsweredInexactlyEndsTheBuild() {
        ObjectServer().use { server ->
            var count = 0
            server.overrides["/new.bin"] = { exchange ->
                count += 1
                if (count == 1) {
                    serveRange(exchange)
                    true
                } else {
                    exchange.responseHeaders.add("Content-Range", "bytes 0-9/${new.size}")
                    exchange.sendResponseHeaders(206, 10)
                    exchange.responseBody.write(new, 0, 10)
                    true
                }
            }
            build(server, temporaryDirectory().resolve("x.delta")) { outcome ->
                val reason = (outcome as SegmentedBuild.Outcome.FallBack).reason
                assertTrue(reason.startsWith("Content-Range 'bytes 0-9/${new.size}', expected 'bytes "), reason)
            }
        }
    }

    private fun serveRange(exchange: HttpExchange) {
        val range = Regex("bytes=(\\d+)-(\\d+)").matchEntire(exchange.requestHeaders.getFirst("Range"))!!
        val start = range.groupValues[1].toInt()
        val end = range.groupValues[2].toInt()
        exchange.responseHeaders.add("Content-Range", "bytes $start-$end/${new.size}")
        exchange.sendResponseHeaders(206, (end - start + 1).toLong())
        exchange.responseBody.write(new, start, end - start + 1)
    }

    @Test
    fun aBuildKeepsTheProvenSegmentsACrashedOneLeft() {
        ObjectServer().use { server ->
            serve(server)
            val part = temporaryDirectory().resolve("x.delta")
            // A crashed build wrote the first two runs' segments (and garbage elsewhere).
            val left = ByteArray(new.size) { 1 }
            System.arraycopy(new, 0, left, 0, newLayout.end(5).toInt())
            Files.write(part, left)
            build(server, part) { outcome ->
                val built = outcome as SegmentedBuild.Outcome.Built
                assertEquals(2, built.requests)
                assertEquals(newLayout.end(5), built.keptBytes)
                assertArrayEquals(new, Files.readAllBytes(part))
            }
        }
    }

    @Test
    fun aDeltaDownloadProvesItsIndexAndLandsWhereThePlainDownloadWould() {
        ObjectServer().use { server ->
            serve(server)
            val index = bytes(5000)
            server.put("/new.bin.mcsx", index)
            val downloads = temporaryDirectory().resolve("downloads")
            HttpStream().use { http ->
                val delta = DeltaDownload(http, downloads)
                assertArrayEquals(index, delta.indexBytes(server.url("/new.bin.mcsx"), 5000, sha256Hex(index), "m"))
                val wrong = thrown<ClientError.HashMismatch> { delta.indexBytes(server.url("/new.bin.mcsx"), 5000, "0".repeat(64), "m") }
                assertEquals(server.url("/new.bin.mcsx"), wrong.file)
                thrown<ClientError.TooLarge> { delta.indexBytes(server.url("/new.bin.mcsx"), 4000, sha256Hex(index), "m") }
                assertNull(delta.indexBytesIfServed(server.url("/missing.mcsx"), 5000, sha256Hex(index), "m"))
                val seedFile = temporaryDirectory().resolve("old.bin").also { Files.write(it, old) }
                val file = RemoteFile(server.url("/new.bin"), newLayout.artifactSha256, new.size.toLong(), "m", "new.bin")
                val built = PositionalFile.openForReading(seedFile).use { seed -> delta.build(file, newLayout, plan, seed)!! }
                assertEquals(downloads.resolve(file.sha256), built.path)
                assertArrayEquals(new, Files.readAllBytes(built.path))
                assertEquals(setOf(file.sha256), names(downloads))
                // A plan that fetches most of the file is left to the plain download.
                val most = SegmentPlan.of(newLayout, emptyMap())
                assertNull(PositionalFile.openForReading(seedFile).use { seed -> delta.build(file, newLayout, most, seed) })
            }
        }
    }

    @Test
    fun aLayoutMustTileItsFile() {
        val sha = "a".repeat(64)
        thrown<ClientError.Configuration> { SegmentLayout(listOf(Segment(0, 10, sha), Segment(11, 10, sha)), 21, sha) }
        thrown<ClientError.Configuration> { SegmentLayout(listOf(Segment(0, 10, sha)), 11, sha) }
        thrown<ClientError.Configuration> { SegmentLayout(listOf(Segment(0, 0, sha)), 0, sha) }
    }
}
