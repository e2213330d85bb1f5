package dev.modelcast.client

import com.sun.net.httpserver.HttpServer
import java.io.Closeable
import java.net.InetAddress
import java.net.InetSocketAddress
import java.security.MessageDigest
import java.time.Instant
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.CountDownLatch
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit

/**
 * A static file server on 127.0.0.1 for the client's tests (the JDK's own HTTP server): each
 * path answers its bytes with a strong ETag (their SHA-256), a 304 to a matching
 * If-None-Match, a 404 for anything else. [stall] paths send their head and then nothing
 * until the server closes, as a server that stopped answering does. Every request is logged.
 */
class StaticServer : Closeable {
    private val server = HttpServer.create(InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0)
    private val files = ConcurrentHashMap<String, ByteArray>()
    private val stalled = ConcurrentHashMap.newKeySet<String>()
    private val release = CountDownLatch(1)
    /** Each request as `METHOD PATH` (with ` If-None-Match` when the header was sent). */
    val requests = CopyOnWriteArrayList<String>()

    init {
        server.executor = Executors.newCachedThreadPool { runnable -> Thread(runnable, "static-server").apply { isDaemon = true } }
        server.createContext("/") { exchange ->
            try {
                val path = exchange.requestURI.rawPath
                val condition = exchange.requestHeaders.getFirst("If-None-Match")
                requests.add("${exchange.requestMethod} $path" + (if (condition != null) " If-None-Match" else ""))
                val body = files[path]
                if (body == null) {
                    exchange.sendResponseHeaders(404, -1)
                    return@createContext
                }
                val etag = "\"" + hex(MessageDigest.getInstance("SHA-256").digest(body)) + "\""
                exchange.responseHeaders.add("ETag", etag)
                when {
                    condition == etag -> exchange.sendResponseHeaders(304, -1)
                    path in stalled -> {
                        exchange.sendResponseHeaders(200, body.size.toLong())
                        exchange.responseBody.flush()
                        release.await(60, TimeUnit.SECONDS)
                    }
                    else -> {
                        exchange.sendResponseHeaders(200, body.size.toLong())
                        exchange.responseBody.write(body)
                    }
                }
            } finally {
                exchange.close()
            }
        }
        server.start()
    }

    /** `http://127.0.0.1:PORT` */
    val base: String get() = "http://127.0.0.1:${server.address.port}"

    /** Serves [bytes] at [path] (`/m.bin`). */
    fun put(path: String, bytes: ByteArray) {
        files[path] = bytes
    }

    /** Makes [path] send its head and then stall. */
    fun stall(path: String) {
        stalled.add(path)
    }

    override fun close() {
        release.countDown()
        server.stop(0)
    }

    companion object {
        fun hex(bytes: ByteArray): String = bytes.joinToString("") { String.format("%02x", it.toInt() and 0xff) }

        fun sha256(bytes: ByteArray): String = hex(MessageDigest.getInstance("SHA-256").digest(bytes))
    }
}

/** Runs [block], which must throw a [T]; returns it (the JUnit Kotlin extension is not in Debian's jar). */
inline fun <reified T : Throwable> assertRaises(block: () -> Unit): T {
    try {
        block()
    } catch (error: Throwable) {
        if (error is T) return error
        throw AssertionError("expected ${T::class.java.name}, got $error", error)
    }
    throw AssertionError("expected ${T::class.java.name}, nothing was thrown")
}

/**
 * An unsigned modelcast manifest (as `modelcast publish` writes one, reduced to what a device
 * reads) naming one file per model, served by [server]: `models` maps a model name to its
 * version and file bytes (published at `/NAME/VERSION/NAME.bin`); [extra] maps a model name to
 * more members of its entry, as JSON without the braces (`"download":"on-demand"`).
 */
class Publisher(private val server: StaticServer) {
    fun publish(sequence: Long, models: Map<String, Pair<String, ByteArray>>, expiresAt: Instant? = null, channel: String = "stable",
                path: String = "/manifest.json", extra: Map<String, String> = emptyMap()) {
        val entries = models.entries.joinToString(",") { (name, release) ->
            val (version, bytes) = release
            val key = "$name/$version/$name.bin"
            server.put("/$key", bytes)
            val members = extra[name]?.takeIf { it.isNotEmpty() }?.let { "$it," } ?: ""
            """"$name":{"version":"$version",$members"files":[{"name":"$name.bin","key":"$key","url":"${server.base}/$key",""" +
                """"sha256":"${StaticServer.sha256(bytes)}","size":${bytes.size},"content_type":"application/octet-stream"}]}"""
        }
        val expiry = expiresAt?.let { ""","expires_at":"$it"""" } ?: ""
        val manifest = """{"format":"modelcast-manifest","format_version":1,"sequence":$sequence,""" +
            """"published_at":"2026-01-01T00:00:00Z"$expiry,"channel":"$channel","models":{$entries}}"""
        server.put(path, manifest.toByteArray())
    }
}
