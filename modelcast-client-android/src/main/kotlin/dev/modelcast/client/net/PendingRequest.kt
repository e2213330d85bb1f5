package dev.modelcast.client.net

import dev.modelcast.client.ClientError
import java.net.HttpURLConnection
import java.util.concurrent.CancellationException
import java.util.concurrent.CountDownLatch
import java.util.concurrent.locks.ReentrantLock

/**
 * One request under way: its receiver, the body bytes it took, and its end, which comes
 * once, from the first of: the worker's completion (or its failure), a receiver's throw, a
 * bound ([TransferWatch]), the caller's cancellation. The caller gets the end at once; a
 * request ended from outside has its connection disconnected off the caller's thread (on
 * the JDK a disconnect waits for a blocked read to return), and whatever its worker still
 * reads is dropped, never handed to the receiver.
 */
internal class PendingRequest(
    val url: String,
    private val receiver: BodyReceiver,
    /** Disconnects a connection off the calling thread. */
    private val stop: (HttpURLConnection) -> Unit
) {
    /**
     * Held while the receiver runs, so an end from another thread (a bound, a cancel) never
     * overlaps a call: once the caller has the end, the receiver's state is the caller's.
     */
    private val lock = ReentrantLock()
    private val done = CountDownLatch(1)
    private var ended = false
    private var failure: Throwable? = null
    private var response: HttpResponse? = null
    private var connection: HttpURLConnection? = null
    private var watch: TransferWatch? = null

    /** Body bytes the receiver took so far (read by the watch's timer). */
    @Volatile
    var bytesTaken: Long = 0
        private set

    val isEnded: Boolean get() = locked { ended }

    /** Starts the watch (unless the request has already ended). */
    fun watch(start: () -> TransferWatch) {
        val started = start()
        val stopNow = locked { if (ended) true else { watch = started; false } }
        if (stopNow) started.stop()
    }

    /** The worker's connection of the moment; false when the request has ended (the worker then disconnects it itself). */
    fun attach(connection: HttpURLConnection): Boolean = locked {
        if (ended) false else { this.connection = connection; true }
    }

    /** The response head, to the receiver: false when the request has ended (now, by its throw, or before). */
    fun deliver(head: HttpResponse): Boolean {
        val end: (() -> Unit)?
        lock.lock()
        try {
            if (ended) return false
            end = try {
                receiver.onResponse(head)
                response = head
                null
            } catch (error: Throwable) {
                ended(error, external = false)
            }
        } finally {
            lock.unlock()
        }
        end?.invoke()
        return end == null
    }

    /** The first read's size: what the receiver accepts after its head. */
    fun firstReadLimit(): Long = locked { receiver.readLimit() }

    /**
     * A body chunk, to the receiver: the size the next read may ask for, or -1 when the
     * request has ended (now, by the receiver's throw, or before): the worker stops reading.
     */
    fun deliver(buffer: ByteArray, count: Int): Long {
        val end: (() -> Unit)?
        val next: Long
        lock.lock()
        try {
            if (ended) return -1
            var limit = -1L
            end = try {
                receiver.onData(buffer, count)
                bytesTaken += count
                limit = receiver.readLimit()
                null
            } catch (error: Throwable) {
                ended(error, external = false)
            }
            next = limit
        } finally {
            lock.unlock()
        }
        end?.invoke()
        return next
    }

    /** The worker's end: `error`, else the response (the body is complete). */
    fun complete(error: Throwable?) {
        val end = locked {
            when {
                error != null -> ended(error, external = false)
                response != null -> ended(null, external = false)
                else -> ended(ClientError.Network(url, "no response"), external = false)
            }
        }
        end()
    }

    /** Ends the request with `error` from outside (a bound, a cancellation), unless it has ended. */
    fun fail(error: Throwable) {
        val end = locked { ended(error, external = true) }
        end()
    }

    /**
     * Waits for the end; a cancel or an interrupt of this thread ends the request first.
     * Returns the response, or throws the error that ended it.
     */
    fun await(cancellation: Cancellation?): HttpResponse {
        val registration = cancellation?.register { fail(CancellationException("cancelled")) }
        try {
            done.await()
        } catch (interrupted: InterruptedException) {
            fail(CancellationException("interrupted"))
            Thread.currentThread().interrupt()
        } finally {
            registration?.remove()
        }
        val (error, head) = locked { Pair(failure, response) }
        if (error != null) throw error
        return head ?: throw ClientError.Network(url, "no response")
    }

    /**
     * Records the end (under `lock`) unless there is one; returns what to do once the lock
     * is released: stop the watch and, for an end from outside (`external`: the worker may
     * be blocked in a read), the transfer; release the caller. The worker disconnects its
     * own connection when it ends the request itself.
     */
    private fun ended(error: Throwable?, external: Boolean): () -> Unit {
        if (ended) return {}
        ended = true
        failure = error
        val watch = this.watch
        val connection = this.connection
        this.watch = null
        this.connection = null
        return {
            watch?.stop()
            if (external && connection != null) stop(connection)
            done.countDown()
        }
    }

    private inline fun <T> locked(body: () -> T): T {
        lock.lock()
        try {
            return body()
        } finally {
            lock.unlock()
        }
    }
}
