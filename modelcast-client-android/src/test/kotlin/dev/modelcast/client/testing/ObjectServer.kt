package dev.modelcast.client.testing

import com.sun.net.httpserver.HttpExchange
import com.sun.net.httpserver.HttpServer
import java.io.Closeable
import java.net.InetAddress
import java.net.InetSocketAddress
import java.util.Collections
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.Executors

/**
 * A well-behaved server on 127.0.0.1 (the JDK's HttpServer): serves byte objects by path,
 * with a strong ETag and single byte ranges (`Range: bytes=a-b` or `a-`, honoured only when
 * an If-Range matches), and logs each request's path and headers.
 */
class ObjectServer : Closeable {
    class Logged(val path: String, val headers: Map<String, String>)

    private val objects = ConcurrentHashMap<String, ByteArray>()
    private val etags = ConcurrentHashMap<String, String>()
    val requests: MutableList<Logged> = Collections.synchronizedList(ArrayList<Logged>())
    /** Per path, a handler that answers instead (return true when it did). */
    val overrides = ConcurrentHashMap<String, (HttpExchange) -> Boolean>()
    private val server = HttpServer.create(InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0), 0)

    init {
        server.executor = Executors.newCachedThreadPool { task -> Thread(task, "object-server").apply { isDaemon = true } }
        server.createContext("/") { exchange -> handle(exchange) }
        server.start()
    }

    val port: Int get() = server.address.port

    fun url(path: String): String = "http://127.0.0.1:$port$path"

    fun put(path: String, bytes: ByteArray, etag: String = "\"${path.hashCode()}-${bytes.size}-${java.util.Arrays.hashCode(bytes)}\"") {
        objects[path] = bytes
        etags[path] = etag
    }

    fun requestsFor(path: String): List<Logged> = synchronized(requests) { requests.filter { it.path == path } }

    private fun handle(exchange: HttpExchange) {
        val path = exchange.requestURI.path
        val headers = exchange.requestHeaders.entries.associate { (name, values) -> lower(name) to values.joinToString(", ") }
        requests.add(Logged(path, headers))
        try {
            if (overrides[path]?.invoke(exchange) == true) return
            val bytes = objects[path]
            if (bytes == null) {
                exchange.sendResponseHeaders(404, -1)
                return
            }
            val etag = etags[path]!!
            exchange.responseHeaders.add("ETag", etag)
            exchange.responseHeaders.add("Accept-Ranges", "bytes")
            val range = headers["range"]
            val ifRange = headers["if-range"]
            val match = range?.let { Regex("bytes=(\\d+)-(\\d*)").matchEntire(it) }
            if (match != null && (ifRange == null || ifRange == etag)) {
                val start = match.groupValues[1].toLong()
                val end = if (match.groupValues[2].isEmpty()) bytes.size - 1L else Math.min(match.groupValues[2].toLong(), bytes.size - 1L)
                if (start >= bytes.size || start > end) {
                    exchange.responseHeaders.add("Content-Range", "bytes */${bytes.size}")
                    exchange.sendResponseHeaders(416, -1)
                    return
                }
                exchange.responseHeaders.add("Content-Range", "bytes $start-$end/${bytes.size}")
                exchange.sendResponseHeaders(206, end - start + 1)
                exchange.responseBody.write(bytes, start.toInt(), (end - start + 1).toInt())
            } else {
                exchange.sendResponseHeaders(200, if (bytes.isEmpty()) -1 else bytes.size.toLong())
                exchange.responseBody.write(bytes)
            }
        } catch (closed: java.io.IOException) {
            // the client went away
        } finally {
            exchange.close()
        }
    }

    override fun close() = server.stop(0)
}
