package dev.modelcast.client.net

import dev.modelcast.client.ClientError
import dev.modelcast.client.testing.ObjectServer
import dev.modelcast.client.testing.RawServer
import dev.modelcast.client.testing.bytes
import dev.modelcast.client.testing.names
import dev.modelcast.client.testing.sha256Hex
import dev.modelcast.client.testing.temporaryDirectory
import dev.modelcast.client.testing.thrown
import dev.modelcast.client.testing.timed
import org.junit.jupiter.api.Assertions.assertArrayEquals
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import java.nio.file.Files
import java.nio.file.Path
import java.util.Collections
import java.util.concurrent.CancellationException
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit

/** Every test is bounded: a broken bound fails it instead of hanging the run. */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class DownloaderTest {
    private val size = 3 shl 20
    private val body = bytes(size, seed = 7)
    private val sha = sha256Hex(body)
    private val half = size / 2

    private fun file(url: String) = RemoteFile(url, sha, size.toLong(), "m", "m.bin")

    private fun <T> downloader(bounds: TransferBounds = TransferBounds(), retries: Int = 3, body: (Downloader, Path) -> T): T {
        val directory = temporaryDirectory().resolve("downloads")
        return HttpStream(bounds).use { http -> body(Downloader(directory, http, retries, backoffMillis = 10), directory) }
    }

    private fun RawServer.Connection.sendHead(status: String, headers: String) = write("HTTP/1.1 $status\r\n$headers\r\n")

    @Test
    fun aDownloadIsProvenAndNamedByItsDigestAndAProvenFileIsNotFetchedAgain() {
        ObjectServer().use { server ->
            server.put("/m.bin", body)
            downloader { downloader, directory ->
                val reported = Collections.synchronizedList(ArrayList<Long>())
                val path = downloader.fetch(file(server.url("/m.bin"))) { reported.add(it) }
                assertEquals(directory.resolve(sha), path)
                assertArrayEquals(body, Files.readAllBytes(path))
                assertEquals(setOf(sha), names(directory))
                assertEquals(size.toLong(), reported.last())
                assertEquals(reported.sorted(), reported)
                assertEquals(size.toLong(), downloader.bytesOnDisk(file(server.url("/m.bin"))))
                downloader.fetch(file(server.url("/m.bin")))
                assertEquals(1, server.requestsFor("/m.bin").size)
            }
        }
    }

    @Test
    fun aDroppedDownloadResumesWithRangeAndIfRange() {
        RawServer { connection ->
            if (connection.number == 1) {
                connection.sendHead("200 OK", "Content-Length: $size\r\nETag: \"e1\"\r\n")
                connection.write(body, 0, half)
            } else {
                connection.sendHead("206 Partial Content", "Content-Length: ${size - half}\r\nContent-Range: bytes $half-${size - 1}/$size\r\nETag: \"e1\"\r\n")
                connection.write(body, half, size - half)
            }
        }.use { server ->
            downloader { downloader, _ ->
                val path = downloader.fetch(file(server.url()))
                assertArrayEquals(body, Files.readAllBytes(path))
                assertEquals(2, server.connections.get())
                val resume = server.heads[1]
                assertTrue(resume.contains("Range: bytes=$half-\r\n"), resume)
                assertTrue(resume.contains("If-Range: \"e1\"\r\n"), resume)
            }
        }
    }

    @Test
    fun aPartialFromAnEarlierLaunchIsResumedAndItsValidatorSent() {
        ObjectServer().use { server ->
            server.put("/m.bin", body, "\"v9\"")
            downloader { downloader, directory ->
                Files.createDirectories(directory)
                Files.write(directory.resolve("$sha.part"), body.copyOf(half))
                Files.write(directory.resolve("$sha.etag"), "\"v9\"".toByteArray())
                assertEquals(half.toLong(), downloader.bytesOnDisk(file(server.url("/m.bin"))))
                assertArrayEquals(body, Files.readAllBytes(downloader.fetch(file(server.url("/m.bin")))))
                val sent = server.requestsFor("/m.bin").single().headers
                assertEquals("bytes=$half-", sent["range"])
                assertEquals("\"v9\"", sent["if-range"])
                assertFalse(Files.exists(directory.resolve("$sha.etag")))
            }
        }
    }

    @Test
    fun aResumeAnsweredWholeStartsTheFileOver() {
        // The ETag changed (If-Range fails) or the server ignores Range: a 200 restarts the file, nothing spliced.
        ObjectServer().use { server ->
            server.put("/m.bin", body, "\"new\"")
            downloader { downloader, directory ->
                Files.createDirectories(directory)
                Files.write(directory.resolve("$sha.part"), ByteArray(half) { 0x55 })
                Files.write(directory.resolve("$sha.etag"), "\"old\"".toByteArray())
                assertArrayEquals(body, Files.readAllBytes(downloader.fetch(file(server.url("/m.bin")))))
                assertEquals(1, server.requestsFor("/m.bin").size)
            }
        }
    }

    @Test
    fun aResumeAnsweredWithAnotherRangeOrA416StartsAgainFromNothing() {
        for (answer in listOf("206 wrong", "416")) {
            RawServer { connection ->
                when (connection.number) {
                    1 -> {
                        connection.sendHead("200 OK", "Content-Length: $size\r\nETag: \"e\"\r\n")
                        connection.write(body, 0, half)
                    }
                    2 -> if (answer == "416") connection.sendHead("416 Range Not Satisfiable", "Content-Length: 0\r\n")
                    else {
                        connection.sendHead("206 Partial Content", "Content-Length: ${size - 10}\r\nContent-Range: bytes 10-${size - 1}/$size\r\n")
                        connection.write(body, 10, size - 10)
                    }
                    else -> {
                        connection.sendHead("200 OK", "Content-Length: $size\r\n")
                        connection.write(body)
                    }
                }
            }.use { server ->
                downloader { downloader, _ ->
                    assertArrayEquals(body, Files.readAllBytes(downloader.fetch(file(server.url()))))
                    assertEquals(3, server.connections.get(), answer)
                    assertFalse(server.heads[2].contains("Range:"), "$answer: the third request resumed: ${server.heads[2]}")
                }
            }
        }
    }

    @Test
    fun aBodyLongerThanTheFileIsRefusedWithinOneByteAndABodyPastAnHonestLengthIsNotRead() {
        // An endless chunked body: refused as a size mismatch, no byte past the size written.
        RawServer { connection ->
            connection.sendHead("200 OK", "Transfer-Encoding: chunked\r\n")
            connection.flood(ByteArray(65536), chunked = true)
        }.use { server ->
            downloader { downloader, directory ->
                val error = thrown<ClientError.SizeMismatch> { downloader.fetch(file(server.url())) }
                assertEquals(size + 1L, error.actual)
                assertEquals(1, server.connections.get()) // not retried
                assertTrue(Files.size(directory.resolve("$sha.part")) <= size)
                assertTrue(server.awaitEnd(5.0), "the server is still writing")
            }
        }
        // A Content-Length that is not the file's: refused before a byte.
        RawServer { connection ->
            connection.sendHead("200 OK", "Content-Length: ${size * 10L}\r\n")
            connection.flood(ByteArray(65536))
        }.use { server ->
            downloader { downloader, _ ->
                val error = thrown<ClientError.SizeMismatch> { downloader.fetch(file(server.url())) }
                assertEquals(size * 10L, error.actual)
                assertEquals("model 'm', file 'm.bin': ${size * 10L} bytes, expected $size", error.message)
            }
        }
        // The right length and bytes, then garbage for ever: the file is the declared bytes, read no further.
        RawServer { connection ->
            connection.sendHead("200 OK", "Content-Length: $size\r\n")
            connection.write(body)
            connection.flood(ByteArray(65536) { 1 })
        }.use { server ->
            downloader { downloader, _ ->
                val (path, seconds) = timed { downloader.fetch(file(server.url())) }
                assertArrayEquals(body, Files.readAllBytes(path))
                assertTrue(seconds < 5, "took $seconds s")
                assertTrue(server.awaitEnd(5.0), "the server is still writing")
            }
        }
    }

    @Test
    fun otherBytesAreRefusedByTheirDigestAndNeverKept() {
        val other = bytes(size, seed = 8)
        ObjectServer().use { server ->
            server.put("/m.bin", other)
            downloader { downloader, directory ->
                val error = thrown<ClientError.HashMismatch> { downloader.fetch(file(server.url("/m.bin"))) }
                assertEquals(sha256Hex(other), error.actual)
                assertEquals(sha, error.expected)
                assertEquals(1, server.requestsFor("/m.bin").size) // a fresh download is not retried
                assertFalse(Files.exists(directory.resolve(sha)))
                assertFalse(Files.exists(directory.resolve("$sha.part")))
            }
        }
    }

    @Test
    fun aResumedFileThatFailsItsDigestIsDownloadedOnceMoreFromNothing() {
        ObjectServer().use { server ->
            server.put("/m.bin", body, "\"v\"")
            downloader { downloader, directory ->
                // A partial of other bytes (a server that spliced, a disk that lied): resumed, wrong, then fetched whole.
                Files.createDirectories(directory)
                Files.write(directory.resolve("$sha.part"), ByteArray(half) { 7 })
                Files.write(directory.resolve("$sha.etag"), "\"v\"".toByteArray())
                assertArrayEquals(body, Files.readAllBytes(downloader.fetch(file(server.url("/m.bin")))))
                val requests = server.requestsFor("/m.bin")
                assertEquals(2, requests.size)
                assertEquals("bytes=$half-", requests[0].headers["range"])
                assertNull(requests[1].headers["range"])
            }
        }
        // A server that splices other bytes into every resume: the second whole attempt has no partial, so its mismatch stands.
        val other = bytes(size, seed = 9)
        RawServer { connection ->
            connection.sendHead("200 OK", "Content-Length: $size\r\n")
            connection.write(other)
        }.use { server ->
            downloader { downloader, directory ->
                Files.createDirectories(directory)
                Files.write(directory.resolve("$sha.part"), body.copyOf(half))
                thrown<ClientError.HashMismatch> { downloader.fetch(file(server.url())) }
                assertEquals(2, server.connections.get())
            }
        }
    }

    @Test
    fun serverErrorsAreRetriedAndMissingFilesAreNot() {
        ObjectServer().use { server ->
            server.put("/m.bin", body)
            var failures = 1
            server.overrides["/m.bin"] = { exchange ->
                if (failures-- > 0) { exchange.sendResponseHeaders(503, -1); true } else false
            }
            downloader { downloader, _ ->
                assertArrayEquals(body, Files.readAllBytes(downloader.fetch(file(server.url("/m.bin")))))
                assertEquals(2, server.requestsFor("/m.bin").size)
                downloader.removeAll()
                val missing = thrown<ClientError.Http> { downloader.fetch(file(server.url("/nothing"))) }
                assertEquals(404, missing.status)
                assertEquals(1, server.requestsFor("/nothing").size)
            }
        }
    }

    @Test
    fun aTrickleIsAbandonedRetriedResumingAndThenGivenUp() {
        // Each attempt: a valid start of the file (resumed where the last one ended), then 1 byte a second.
        RawServer { connection ->
            val range = connection.header("Range")
            val from = range?.removePrefix("bytes=")?.removeSuffix("-")?.toInt() ?: 0
            if (from == 0) connection.sendHead("200 OK", "Content-Length: $size\r\nETag: \"t\"\r\n")
            else connection.sendHead("206 Partial Content", "Content-Length: ${size - from}\r\nContent-Range: bytes $from-${size - 1}/$size\r\nETag: \"t\"\r\n")
            connection.write(body, from, 1000)
            var at = from + 1000
            while (true) {
                Thread.sleep(1000)
                connection.write(body, at++, 1)
            }
        }.use { server ->
            downloader(TransferBounds(minimumRate = 10_000, windowSeconds = 0.5), retries = 2) { downloader, _ ->
                val (error, seconds) = timed { thrown<ClientError.TooSlow> { downloader.fetch(file(server.url())) } }
                assertEquals(3, server.connections.get())
                assertTrue(server.heads[1].contains("Range: bytes=1000-"), server.heads[1])
                assertTrue(server.heads[2].contains("Range: bytes=2000-"), server.heads[2])
                assertTrue(seconds < 3.0, "took $seconds s")
                assertEquals(10_000L, error.minimumRate)
                assertEquals(3000L, downloader.bytesOnDisk(file(server.url())))
            }
        }
    }

    @Test
    fun aCancelStopsTheDownloadAndKeepsItsPartial() {
        RawServer { connection ->
            connection.sendHead("200 OK", "Content-Length: $size\r\n")
            connection.write(body, 0, 5000)
            while (true) Thread.sleep(1000)
        }.use { server ->
            downloader { downloader, _ ->
                val cancellation = Cancellation()
                Executors.newSingleThreadScheduledExecutor().schedule({ cancellation.cancel() }, 500, TimeUnit.MILLISECONDS)
                val (_, seconds) = timed { thrown<CancellationException> { downloader.fetch(file(server.url()), cancellation) } }
                assertTrue(seconds < 1.0, "took $seconds s")
                assertEquals(5000L, downloader.bytesOnDisk(file(server.url())))
            }
        }
    }

    @Test
    fun removeAllKeepsOnlyTheDigestsNamed() {
        downloader { downloader, directory ->
            Files.createDirectories(directory)
            val keep = "a".repeat(64)
            val drop = "b".repeat(64)
            for (name in listOf(keep, "$keep.part", drop, "$drop.part", "$drop.etag")) Files.write(directory.resolve(name), byteArrayOf(1))
            downloader.removeAll(setOf(keep))
            assertEquals(setOf(keep, "$keep.part"), names(directory))
            downloader.removeAll()
            assertFalse(Files.exists(directory))
        }
    }

    @Test
    fun aDigestThatIsNotOneIsRefusedBeforeAnyPathIsMade() {
        val error = thrown<ClientError.InvalidManifest> { RemoteFile("http://h/m", "../../etc/passwd", 1, "m", "m.bin") }
        assertEquals("http://h/m: sha256 '../../etc/passwd' is not a SHA-256 digest (64 lowercase hexadecimal digits)", error.message)
        thrown<ClientError.InvalidManifest> { RemoteFile("http://h/m", sha.replace('a', 'A'), 1, "m", "m.bin") }
    }
}
