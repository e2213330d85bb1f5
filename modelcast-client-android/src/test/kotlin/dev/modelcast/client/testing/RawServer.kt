package dev.modelcast.client.testing

import java.io.Closeable
import java.io.IOException
import java.io.InputStream
import java.io.OutputStream
import java.net.InetAddress
import java.net.ServerSocket
import java.net.Socket
import java.util.Collections
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicLong

/**
 * A misbehaving server on 127.0.0.1: a raw socket per connection, answered by `script`
 * with the request's head (endless bodies, lying lengths, trickles, silence, drops). It
 * counts what it wrote and notes when a connection was closed by the client (a write or a
 * read failed), so a test can tell the client stopped reading and hung up.
 */
class RawServer(private val script: (Connection) -> Unit) : Closeable {
    /** One accepted connection. */
    inner class Connection(val socket: Socket, val number: Int, val head: String) {
        val output: OutputStream = socket.getOutputStream()
        val requestLine: String get() = head.lineSequence().first()

        /** A request header's value (case-insensitive), if sent. */
        fun header(name: String): String? = head.lineSequence().drop(1).mapNotNull { line ->
            val colon = line.indexOf(':')
            if (colon > 0 && line.substring(0, colon).trim().equals(name, ignoreCase = true)) line.substring(colon + 1).trim() else null
        }.firstOrNull()

        fun write(text: String) = write(text.toByteArray(Charsets.ISO_8859_1))

        fun write(bytes: ByteArray, offset: Int = 0, count: Int = bytes.size - offset) {
            output.write(bytes, offset, count)
            output.flush()
            written.addAndGet(count.toLong())
        }

        /** Writes `bytes` endlessly (until the client hangs up), `chunked` as HTTP chunks. */
        fun flood(chunk: ByteArray, chunked: Boolean = false) {
            val framed = if (chunked) (Integer.toHexString(chunk.size) + "\r\n").toByteArray() + chunk + "\r\n".toByteArray() else chunk
            while (true) write(framed)
        }

        /** Blocks until the client closes the connection (a read sees its end or fails), at most `seconds`; true if it did. */
        fun awaitClose(seconds: Double): Boolean {
            socket.soTimeout = Math.max(1, (seconds * 1000).toInt())
            return try {
                val input = socket.getInputStream()
                while (input.read() >= 0) {}
                true
            } catch (timeout: java.net.SocketTimeoutException) {
                false
            } catch (closed: IOException) {
                true
            }
        }
    }

    private val server = ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"))
    val connections = AtomicInteger()
    val written = AtomicLong()
    /** Connections the client closed while the script wrote (its write failed). */
    val hungUp = AtomicInteger()
    val heads: MutableList<String> = Collections.synchronizedList(ArrayList<String>())
    private val sockets: MutableList<Socket> = Collections.synchronizedList(ArrayList<Socket>())
    /** Counted down when a connection's script ends (normally or by the client's hang-up). */
    val ended = CountDownLatch(1)

    init {
        Thread({
            while (!server.isClosed) {
                val socket = try { server.accept() } catch (closed: IOException) { break }
                sockets.add(socket)
                val number = connections.incrementAndGet()
                Thread({ serve(socket, number) }, "raw-server-$number").apply { isDaemon = true }.start()
            }
        }, "raw-server").apply { isDaemon = true }.start()
    }

    val port: Int get() = server.localPort

    fun url(path: String = "/object"): String = "http://127.0.0.1:$port$path"

    private fun serve(socket: Socket, number: Int) {
        try {
            val head = readHead(socket.getInputStream())
            heads.add(head)
            script(Connection(socket, number, head))
        } catch (closed: IOException) {
            hungUp.incrementAndGet()
        } catch (interrupted: InterruptedException) {
        } finally {
            ended.countDown()
            try { socket.close() } catch (ignored: IOException) {}
        }
    }

    private fun readHead(input: InputStream): String {
        val out = StringBuilder()
        while (!out.endsWith("\r\n\r\n")) {
            val byte = input.read()
            if (byte < 0) throw IOException("closed before the head")
            out.append(byte.toChar())
        }
        return out.toString()
    }

    /** Waits until a script ended, at most `seconds`. */
    fun awaitEnd(seconds: Double): Boolean = ended.await((seconds * 1000).toLong(), TimeUnit.MILLISECONDS)

    override fun close() {
        server.close()
        synchronized(sockets) { for (socket in sockets) try { socket.close() } catch (ignored: IOException) {} }
    }
}
