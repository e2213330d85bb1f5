package dev.modelcast.client.net

import dev.modelcast.client.ClientError
import dev.modelcast.client.testing.ObjectServer
import dev.modelcast.client.testing.RawServer
import dev.modelcast.client.testing.assertPlainWords
import dev.modelcast.client.testing.bytes
import dev.modelcast.client.testing.thrown
import dev.modelcast.client.testing.timed
import org.junit.jupiter.api.Assertions.assertArrayEquals
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import java.net.ServerSocket
import java.util.concurrent.CancellationException
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit

/** Every test is bounded: a broken bound fails it instead of hanging the run. */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class HttpStreamTest {
    private fun http(bounds: TransferBounds = TransferBounds()) = HttpStream(bounds)

    @Test
    fun aSmallObjectIsReadWholeWithItsStatusAndHeaders() {
        ObjectServer().use { server ->
            val body = bytes(100_000)
            server.put("/manifest.json", body, "\"v1\"")
            http().use { client ->
                val answer = client.small(HttpRequest(server.url("/manifest.json"), mapOf("If-None-Match" to "\"v0\"")), SmallObject.MANIFEST, 4 shl 20)
                assertEquals(200, answer.response.status)
                assertEquals("\"v1\"", answer.response.header("etag"))
                assertArrayEquals(body, answer.body)
                val sent = server.requestsFor("/manifest.json").single().headers
                assertEquals("identity", sent["accept-encoding"])
                assertEquals("\"v0\"", sent["if-none-match"])
                // A 404 is the caller's to judge, not an error here.
                assertEquals(404, client.small(HttpRequest(server.url("/missing")), SmallObject.SIGNATURE, 16_384).response.status)
            }
        }
    }

    @Test
    fun aContentLengthAboveTheLimitIsRefusedBeforeTheBodyIsRead() {
        // The server promises 10 MB, sends 1 byte, and waits: the refusal cannot have waited for the body.
        RawServer { connection ->
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 10000000\r\n\r\nx")
            connection.awaitClose(10.0)
        }.use { server ->
            http().use { client ->
                val (error, seconds) = timed { thrown<ClientError.ManifestTooLarge> { client.small(HttpRequest(server.url()), SmallObject.MANIFEST, 1000) } }
                assertEquals(1000L, error.limit)
                assertTrue(seconds < 2, "took $seconds s")
                assertTrue(server.awaitEnd(5.0), "the connection was not closed")
            }
        }
    }

    @Test
    fun anEndlessBodyIsNotReadPastItsLimitAndItsConnectionIsClosed() {
        for (chunked in listOf(false, true)) {
            RawServer { connection ->
                connection.write(if (chunked) "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" else "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
                connection.flood(ByteArray(4096) { 'a'.toByte() }, chunked)
            }.use { server ->
                http().use { client ->
                    var handed = 0L
                    val receiver = object : BodyReceiver {
                        override fun onResponse(response: HttpResponse) {}
                        override fun onData(buffer: ByteArray, count: Int) {
                            handed += count
                            if (handed > 100_000) throw ClientError.TooLarge(server.url(), "signature", 100_000)
                        }
                        override fun readLimit(): Long = 100_000 - handed + 1
                    }
                    val (error, seconds) = timed { thrown<ClientError.TooLarge> { client.get(HttpRequest(server.url()), true, receiver) } }
                    assertEquals("signature", error.objectName)
                    // Reads ask for one byte past the limit: no more was handed over.
                    assertEquals(100_001L, handed, "chunked=$chunked")
                    assertTrue(seconds < 2, "took $seconds s")
                    // The server's writes fail once the client hangs up: it stopped reading and closed.
                    assertTrue(server.awaitEnd(5.0), "chunked=$chunked: the server is still writing")
                    assertEquals(1, server.hungUp.get())
                }
            }
        }
    }

    @Test
    fun aSmallObjectPastItsLimitIsRefusedNamingIt() {
        RawServer { connection ->
            connection.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            connection.flood(ByteArray(1000), chunked = true)
        }.use { server ->
            http().use { client ->
                val error = thrown<ClientError.TooLarge> { client.small(HttpRequest(server.url()), SmallObject.SEGMENT_INDEX, 5000) }
                assertEquals("${server.url()}: the segment index is larger than 5000 bytes", error.message)
                assertTrue(server.awaitEnd(5.0))
            }
        }
    }

    @Test
    fun aTrickleIsAbandonedAtTheEndOfItsFirstWindowAndTheCallerReturnsAtOnce() {
        // (A length above 512 KiB: the JDK drains a smaller abandoned body before closing; see HttpStream.)
        RawServer { connection ->
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 10000000\r\n\r\n")
            while (true) {
                connection.write("x")
                Thread.sleep(1000)
            }
        }.use { server ->
            http(TransferBounds(minimumRate = 100, windowSeconds = 1.5)).use { client ->
                val (error, seconds) = timed { thrown<ClientError.TooSlow> { client.small(HttpRequest(server.url()), SmallObject.MANIFEST, 16 shl 20) } }
                assertEquals(100L, error.minimumRate)
                assertTrue(error.received <= 2, "received ${error.received}")
                assertTrue(seconds in 1.4..2.2, "took $seconds s")
                assertEquals("${server.url()}: the transfer brought ${error.received} bytes in 2 s, less than the minimum of 100 bytes/s; abandoned", error.message)
                // The JDK closes the socket once the blocked read returns (the next byte, within 1 s).
                assertTrue(server.awaitEnd(5.0), "the connection was not closed")
            }
        }
    }

    @Test
    fun aStalledBodyReturnsAtTheRateWindowNotAtTheIdleTimeout() {
        // Headers and 10 bytes, then silence: the read blocks; the watchdog still ends the call on time.
        RawServer { connection ->
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n0123456789")
            connection.awaitClose(60.0)
        }.use { server ->
            http(TransferBounds(idleTimeoutSeconds = 30.0, minimumRate = 1000, windowSeconds = 1.0)).use { client ->
                val (_, seconds) = timed { thrown<ClientError.TooSlow> { client.small(HttpRequest(server.url()), SmallObject.MANIFEST, 1 shl 20) } }
                assertTrue(seconds < 1.6, "took $seconds s")
            }
        }
    }

    @Test
    fun aMetadataRequestIsAbandonedAtItsDeadlineHoweverFastItsBytes() {
        // 1 KB every 100 ms: far above the rate, for ever.
        RawServer { connection ->
            connection.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            while (true) {
                connection.write("400\r\n" + "y".repeat(1024) + "\r\n")
                Thread.sleep(100)
            }
        }.use { server ->
            http(TransferBounds(minimumRate = 10, windowSeconds = 0.5, metadataDeadlineSeconds = 1.5)).use { client ->
                val (error, seconds) = timed { thrown<ClientError.DeadlineExceeded> { client.small(HttpRequest(server.url()), SmallObject.MANIFEST, 1 shl 20) } }
                assertTrue(seconds in 1.4..2.0, "took $seconds s")
                assertTrue(error.received > 5000, "received ${error.received}")
                assertEquals("${server.url()}: not complete within 2 s (${error.received} bytes received); abandoned", error.message)
            }
        }
    }

    @Test
    fun aServerThatNeverAnswersIsEndedByTheDeadlineOrTheIdleTimeout() {
        RawServer { connection -> connection.awaitClose(60.0) }.use { server ->
            http(TransferBounds(minimumRate = 0, metadataDeadlineSeconds = 1.0)).use { client ->
                val (_, seconds) = timed { thrown<ClientError.DeadlineExceeded> { client.small(HttpRequest(server.url()), SmallObject.MANIFEST, 1000) } }
                assertTrue(seconds in 0.9..1.5, "took $seconds s")
            }
            // Not metadata, no rate check: the idle timeout, in words.
            http(TransferBounds(minimumRate = 0, idleTimeoutSeconds = 1.0)).use { client ->
                val noop = object : BodyReceiver {
                    override fun onResponse(response: HttpResponse) {}
                    override fun onData(buffer: ByteArray, count: Int) {}
                }
                val (error, seconds) = timed { thrown<ClientError.Network> { client.get(HttpRequest(server.url()), false, noop) } }
                assertTrue(seconds in 0.9..1.8, "took $seconds s")
                assertEquals("${server.url()}: the server sent nothing for 1 s (timed out)", error.message)
            }
        }
    }

    @Test
    fun networkFailuresReadInPlainWords() {
        val closedPort = ServerSocket(0).use { it.localPort }
        http().use { client ->
            val refused = thrown<ClientError.Network> { client.small(HttpRequest("http://127.0.0.1:$closedPort/m"), SmallObject.MANIFEST, 100) }
            assertEquals("http://127.0.0.1:$closedPort/m: cannot connect to 127.0.0.1:$closedPort (connection refused)", refused.message)
            val unknown = thrown<ClientError.Network> { client.small(HttpRequest("http://no-such-host.invalid/m"), SmallObject.MANIFEST, 100) }
            assertEquals("http://no-such-host.invalid/m: cannot find the host no-such-host.invalid (name lookup failed)", unknown.message)
            val scheme = thrown<ClientError.Network> { client.small(HttpRequest("file:///etc/passwd"), SmallObject.MANIFEST, 100) }
            assertEquals("file:///etc/passwd: not an http or https URL", scheme.message)
        }
        RawServer { connection -> connection.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhalf") }.use { server ->
            http().use { client ->
                val lost = thrown<ClientError.Network> { client.small(HttpRequest(server.url()), SmallObject.MANIFEST, 1000) }
                assertEquals("${server.url()}: the connection to 127.0.0.1 was lost after 4 of 100 bytes", lost.message)
            }
        }
        RawServer { connection -> connection.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nhalf\r\n") }.use { server ->
            http().use { client ->
                val lost = thrown<ClientError.Network> { client.small(HttpRequest(server.url()), SmallObject.MANIFEST, 1000) }
                assertPlainWords(lost.message)
                assertEquals("${server.url()}: the connection to 127.0.0.1 was lost", lost.message)
            }
        }
        RawServer { connection -> connection.write("garbage\r\n\r\n") }.use { server ->
            http().use { client -> assertPlainWords(thrown<ClientError.Network> { client.small(HttpRequest(server.url()), SmallObject.MANIFEST, 1000) }.message) }
        }
    }

    @Test
    fun redirectsAreFollowedToHttpOnlyAndAFewHopsAtMost() {
        ObjectServer().use { server ->
            server.put("/real", "bytes".toByteArray())
            for (hop in 1..9) {
                server.overrides["/hop$hop"] = { exchange ->
                    exchange.responseHeaders.add("Location", if (hop == 1) "/real" else "/hop${hop - 1}")
                    exchange.sendResponseHeaders(302, -1)
                    true
                }
            }
            server.overrides["/to-file"] = { exchange ->
                exchange.responseHeaders.add("Location", "file:///etc/passwd")
                exchange.sendResponseHeaders(301, -1)
                true
            }
            http().use { client ->
                val answer = client.small(HttpRequest(server.url("/hop5")), SmallObject.MANIFEST, 100)
                assertEquals("bytes", String(answer.body))
                assertEquals(server.url("/real"), answer.response.url)
                val tooMany = thrown<ClientError.Network> { client.small(HttpRequest(server.url("/hop6")), SmallObject.MANIFEST, 100) }
                assertEquals("${server.url("/hop6")}: more than 5 redirects", tooMany.message)
                val file = thrown<ClientError.Network> { client.small(HttpRequest(server.url("/to-file")), SmallObject.MANIFEST, 100) }
                assertEquals("${server.url("/to-file")}: a redirect to 'file:///etc/passwd', which is not an http or https URL", file.message)
            }
        }
    }

    @Test
    fun aCancelEndsTheRequestAtOnce() {
        RawServer { connection ->
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
            while (true) {
                connection.write("x")
                Thread.sleep(1000)
            }
        }.use { server ->
            http().use { client ->
                val cancellation = Cancellation()
                Executors.newSingleThreadScheduledExecutor().schedule({ cancellation.cancel() }, 300, TimeUnit.MILLISECONDS)
                val (_, seconds) = timed {
                    thrown<CancellationException> { client.small(HttpRequest(server.url()), SmallObject.MANIFEST, 1 shl 20, cancellation) }
                }
                assertTrue(seconds < 0.6, "took $seconds s")
            }
        }
    }
}
