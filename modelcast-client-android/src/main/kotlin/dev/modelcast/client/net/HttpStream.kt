package dev.modelcast.client.net

import dev.modelcast.client.ClientError
import dev.modelcast.client.quoted
import java.io.Closeable
import java.io.IOException
import java.net.HttpURLConnection
import java.net.MalformedURLException
import java.net.URL
import java.util.concurrent.CancellationException
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.ExecutorService
import java.util.concurrent.Executors
import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.ScheduledThreadPoolExecutor
import java.util.concurrent.ThreadFactory
import java.util.concurrent.atomic.AtomicInteger

/**
 * GETs whose bodies are handed over chunk by chunk as they arrive (so a file is hashed
 * while it is written, and a body is never read past a limit), with `HttpURLConnection`
 * only, each held to its [TransferBounds]: connect and idle timeouts on the connection, a
 * minimum rate per window and a metadata deadline by timers ([TransferWatch]).
 *
 * Each request runs on a worker thread while its caller waits: a request that fails (a
 * receiver threw, a bound was reached, the caller cancelled or was interrupted) returns to
 * its caller at once, and its connection is disconnected. On the JDK a disconnect cannot
 * interrupt a read blocked inside a Content-Length or chunked body (the stream's lock is
 * held by the read), so there the socket closes when that read returns — with the next
 * byte, or at the idle timeout; meanwhile the worker hands nothing more to anyone. Android's
 * `HttpURLConnection` closes the socket at once.
 *
 * Every request ends with a disconnect: a connection whose server may still be writing (a
 * lying Content-Length, an endless body) is never reused, and requests say
 * `Connection: close`. One JDK limit remains: an abandoned response that declared a
 * Content-Length of at most 512 KiB, from a server that keeps the connection open anyway,
 * is drained (and dropped) by the JDK's keep-alive cleaner thread up to that length before
 * its socket closes, unless the JVM runs with `-Dhttp.KeepAlive.remainingData=0`; nothing
 * of it reaches the client, and the caller has returned. Redirects are followed here, not
 * by the connection, to http and https URLs only and at most [maxRedirects] hops.
 *
 * @param defaultHeaders headers every request carries (the app's own, e.g. a User-Agent).
 * @param openConnection the app's seam for a proxy or a TLS configuration: opens a URL's connection.
 */
class HttpStream(
    val bounds: TransferBounds = TransferBounds(),
    val maxRedirects: Int = 5,
    private val defaultHeaders: Map<String, String> = emptyMap(),
    private val openConnection: (URL) -> HttpURLConnection = { url -> url.openConnection() as HttpURLConnection }
) : Closeable {
    private val workers: ExecutorService = Executors.newCachedThreadPool(daemonThreads("modelcast-http"))
    private val timers = ScheduledThreadPoolExecutor(1, daemonThreads("modelcast-transfer-watch")).apply { removeOnCancelPolicy = true }
    /** Read buffers, reused from request to request (a worker owns one until its last read returns). */
    private val buffers = ConcurrentLinkedQueue<ByteArray>()

    init {
        if (maxRedirects < 0) throw ClientError.Configuration("maxRedirects $maxRedirects must not be negative")
    }

    /**
     * Sends a GET for `request` and streams its answer to `receiver`; returns the response
     * once the body is complete. `metadata`: the request is held to the metadata deadline too.
     * @throws ClientError the receiver's error, or [ClientError.Network], [ClientError.TooSlow],
     *   [ClientError.DeadlineExceeded] naming the URL.
     * @throws CancellationException when `cancellation` was cancelled or the calling thread interrupted.
     */
    fun get(request: HttpRequest, metadata: Boolean, receiver: BodyReceiver, cancellation: Cancellation? = null): HttpResponse {
        cancellation?.throwIfCancelled()
        val url = parseURL(request.url)
        val pending = PendingRequest(request.url, receiver) { connection ->
            try {
                workers.execute { disconnectQuietly(connection) }
            } catch (closed: RejectedExecutionException) {
                disconnectQuietly(connection)
            }
        }
        pending.watch { TransferWatch(pending, bounds, metadata, timers) }
        try {
            workers.execute { run(pending, request, url) }
        } catch (closed: RejectedExecutionException) {
            pending.fail(ClientError.Network(request.url, "the HTTP client is closed"))
        }
        return pending.await(cancellation)
    }

    /**
     * A GET of a small object into memory, refusing more than `limit` bytes: a Content-Length
     * above it before a byte of the body is read, a longer body as soon as a read crosses it
     * (at most one byte past it is read). A metadata request: held to the deadline too.
     * The status is the caller's to judge (a manifest's 304, a signature's 404).
     */
    fun small(request: HttpRequest, kind: SmallObject, limit: Long, cancellation: Cancellation? = null): SmallResponse {
        if (limit < 0 || limit > Int.MAX_VALUE - 16) throw ClientError.Configuration("limit $limit must be 0 to ${Int.MAX_VALUE - 16} bytes")
        val body = SmallBody(request.url, kind, limit)
        val response = get(request, metadata = true, receiver = body, cancellation = cancellation)
        return SmallResponse(response, body.bytes())
    }

    /** Stops the client's threads; call it once no request is under way. */
    override fun close() {
        workers.shutdown()
        timers.shutdown()
    }

    private fun parseURL(text: String): URL {
        val url = try { URL(text) } catch (bad: MalformedURLException) {
            throw ClientError.Network(text, "not a URL")
        }
        if (!isHttp(url)) throw ClientError.Network(text, "not an http or https URL")
        return url
    }

    /** The worker: connects (following redirects), hands the head and the body to the request, ends it. */
    private fun run(pending: PendingRequest, request: HttpRequest, start: URL) {
        var connection: HttpURLConnection? = null
        var phase = Phase.CONNECTING
        val buffer = buffers.poll() ?: ByteArray(BUFFER_SIZE)
        try {
            var target = start
            var hops = 0
            while (true) {
                if (pending.isEnded) return
                val opened = open(target, request)
                connection = opened
                if (!pending.attach(opened)) return
                phase = Phase.CONNECTING
                opened.connect()
                phase = Phase.WAITING
                val status = opened.responseCode
                val location = if (status in REDIRECTS) opened.getHeaderField("Location") else null
                if (location != null) {
                    hops += 1
                    if (hops > maxRedirects) throw ClientError.Network(request.url, "more than $maxRedirects redirects")
                    target = redirectTarget(request.url, target, location)
                    disconnectQuietly(opened)
                    connection = null
                    continue
                }
                if (status < 100) throw ClientError.Network(request.url, "the server's answer is not valid HTTP")
                val head = HttpResponse(target.toString(), status, headersOf(opened))
                if (!pending.deliver(head)) return
                phase = Phase.READING
                // The body ends at its Content-Length: the JDK's stream does not stop there
                // (a read may return bytes past it), so the framing is enforced here.
                val length = if (head.chunked || status == 304 || status == 204) null else head.contentLength
                val received = readBody(pending, opened, status, buffer, length) ?: return
                if (length != null && received < length) {
                    throw ClientError.Network(request.url, "the connection to ${target.host} was lost after $received of $length bytes")
                }
                pending.complete(null)
                return
            }
        } catch (error: Throwable) {
            pending.complete(translate(error, request.url, phase))
        } finally {
            connection?.let { disconnectQuietly(it) }
            if (buffers.size < KEPT_BUFFERS) buffers.offer(buffer)
        }
    }

    /**
     * Reads the body (at most `length` bytes when it is framed by one) into the request;
     * the bytes read, or null when the request ended meanwhile.
     */
    private fun readBody(pending: PendingRequest, connection: HttpURLConnection, status: Int, buffer: ByteArray, length: Long?): Long? {
        if (length == 0L) return 0
        val input = (if (status >= 400) connection.errorStream else connection.inputStream) ?: return 0
        var received = 0L
        var want = pending.firstReadLimit()
        while (true) {
            if (want < 0) return null
            if (length != null) {
                if (received == length) return received
                want = Math.min(want, length - received)
            }
            val count = input.read(buffer, 0, Math.max(1L, Math.min(buffer.size.toLong(), want)).toInt())
            if (count < 0) return received
            if (count == 0) continue
            received += count
            want = pending.deliver(buffer, count)
        }
    }

    private fun open(url: URL, request: HttpRequest): HttpURLConnection {
        val connection = openConnection(url)
        connection.instanceFollowRedirects = false
        connection.useCaches = false
        connection.connectTimeout = millis(bounds.connectTimeoutSeconds)
        connection.readTimeout = millis(bounds.idleTimeoutSeconds)
        for ((name, value) in defaultHeaders) connection.setRequestProperty(name, value)
        for ((name, value) in request.headers) connection.setRequestProperty(name, value)
        connection.setRequestProperty("Accept-Encoding", "identity")
        // Connections are never reused (each request ends with a disconnect), and a server
        // that closes after its answer lets the JDK close an abandoned one at once rather
        // than drain it (see the type's comment).
        connection.setRequestProperty("Connection", "close")
        return connection
    }

    private fun redirectTarget(asked: String, from: URL, location: String): URL {
        val next = try { URL(from, location) } catch (bad: MalformedURLException) {
            throw ClientError.Network(asked, "a redirect to ${quoted(location)}, which is not a URL")
        }
        if (!isHttp(next)) throw ClientError.Network(asked, "a redirect to ${quoted(location)}, which is not an http or https URL")
        return next
    }

    private fun translate(error: Throwable, url: String, phase: Phase): Throwable = when (error) {
        is ClientError, is CancellationException -> error
        is IOException -> ClientError.Network(url, networkFailureReason(error, url, bounds, phase))
        is IllegalArgumentException, is IllegalStateException ->
            ClientError.Network(url, "the request could not be sent (the connection refused a header or the URL)")
        is RuntimeException -> ClientError.Network(url, networkFailureReason(IOException(), url, bounds, phase))
        else -> error
    }

    private companion object {
        const val BUFFER_SIZE = 1 shl 20
        const val KEPT_BUFFERS = 4
        val REDIRECTS = setOf(301, 302, 303, 307, 308)

        fun isHttp(url: URL): Boolean {
            val scheme = asciiLowercase(url.protocol)
            return (scheme == "http" || scheme == "https") && !url.host.isNullOrEmpty()
        }

        fun headersOf(connection: HttpURLConnection): Map<String, List<String>> {
            val out = LinkedHashMap<String, List<String>>()
            for ((name, values) in connection.headerFields) {
                // The null name is the status line.
                if (name != null) out[name] = values
            }
            return out
        }

        /** A disconnect may race the worker's own (both are harmless; the JDK's is not thread-safe). */
        fun disconnectQuietly(connection: HttpURLConnection) {
            try {
                connection.disconnect()
            } catch (ignored: RuntimeException) {
            }
        }

        fun daemonThreads(name: String): ThreadFactory {
            val count = AtomicInteger()
            return ThreadFactory { task ->
                Thread(task, "$name-${count.incrementAndGet()}").apply { isDaemon = true }
            }
        }
    }
}

/** A small object's response: its head and its whole body (at most the limit). */
class SmallResponse(val response: HttpResponse, val body: ByteArray)

/** What a small object is, for the error that refuses one too large. */
enum class SmallObject {
    MANIFEST, SIGNATURE, SEGMENT_INDEX, MODEL_SIGNATURE_BUNDLE, KEY_SET, SIGNATURE_LIST;

    /** The error refusing more than `limit` bytes of this object from `url`. */
    fun tooLarge(url: String, limit: Long): ClientError = when (this) {
        MANIFEST -> ClientError.ManifestTooLarge(url, limit)
        SIGNATURE -> ClientError.TooLarge(url, "signature", limit)
        SEGMENT_INDEX -> ClientError.TooLarge(url, "segment index", limit)
        MODEL_SIGNATURE_BUNDLE -> ClientError.TooLarge(url, "model signature bundle", limit)
        KEY_SET -> ClientError.TooLarge(url, "key set", limit)
        SIGNATURE_LIST -> ClientError.TooLarge(url, "signature list", limit)
    }
}

/** A small object's bytes as they arrive, refused past `limit`. */
private class SmallBody(private val url: String, private val kind: SmallObject, private val limit: Long) : BodyReceiver {
    private var data = ByteArray(0)
    private var count = 0

    override fun onResponse(response: HttpResponse) {
        val length = response.contentLength
        if (length != null && length > limit) throw kind.tooLarge(url, limit)
        // One allocation for a body of known length; otherwise the array doubles.
        data = ByteArray(Math.min(length ?: 16_384L, limit).toInt())
    }

    override fun onData(buffer: ByteArray, count: Int) {
        if (this.count.toLong() + count > limit) throw kind.tooLarge(url, limit)
        if (this.count + count > data.size) {
            data = data.copyOf(Math.min(limit, Math.max(data.size * 2L, this.count.toLong() + count)).toInt())
        }
        System.arraycopy(buffer, 0, data, this.count, count)
        this.count += count
    }

    override fun readLimit(): Long = limit - count + 1

    fun bytes(): ByteArray = if (count == data.size) data else data.copyOf(count)
}
