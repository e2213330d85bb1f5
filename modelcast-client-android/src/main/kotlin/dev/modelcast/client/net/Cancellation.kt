package dev.modelcast.client.net

import java.util.concurrent.CancellationException

/**
 * A way for the caller to stop a request, a download or a wait from another thread (a
 * coroutine's `invokeOnCancellation`, a button): `cancel()` ends the request under way at
 * once, and the blocked call throws [CancellationException] (which is what kotlinx.coroutines
 * throws for a cancelled coroutine). An interrupted caller thread counts as a cancel too.
 * Partial downloads are kept for the next attempt.
 */
class Cancellation {
    // java.lang.Object for wait/notifyAll: a cancel wakes a sleeping retry at once.
    private val lock = java.lang.Object()
    private var cancelled = false
    private val actions = ArrayList<Registration>()

    /** True once [cancel] was called. */
    val isCancelled: Boolean get() = synchronized(lock) { cancelled }

    /** Cancels, running every registered action once (on this thread). */
    fun cancel() {
        val toRun = synchronized(lock) {
            if (cancelled) return
            cancelled = true
            lock.notifyAll()
            ArrayList(actions).also { actions.clear() }
        }
        for (registration in toRun) registration.action()
    }

    /** Throws [CancellationException] once cancelled. */
    fun throwIfCancelled() {
        if (isCancelled) throw CancellationException("cancelled")
    }

    /** A registered action; [remove] it when what it stops has ended. */
    internal inner class Registration(val action: () -> Unit) {
        fun remove() {
            synchronized(lock) { actions.remove(this) }
        }
    }

    /** Runs `action` when cancelled (at once, on this thread, if it already is). */
    internal fun register(action: () -> Unit): Registration {
        val registration = Registration(action)
        val now = synchronized(lock) {
            if (cancelled) true else { actions.add(registration); false }
        }
        if (now) action()
        return registration
    }

    /** Sleeps `millis`, or less when cancelled (then throws [CancellationException]). */
    internal fun sleep(millis: Long) {
        val deadline = System.nanoTime() + millis * 1_000_000
        synchronized(lock) {
            while (!cancelled) {
                val left = (deadline - System.nanoTime()) / 1_000_000
                if (left <= 0) return
                lock.wait(left)
            }
        }
        throw CancellationException("cancelled")
    }
}

/** Sleeps `millis`, ended early by `cancellation` or by an interrupt (both: [CancellationException]). */
internal fun pause(millis: Long, cancellation: Cancellation?) {
    try {
        if (cancellation != null) cancellation.sleep(millis) else Thread.sleep(millis)
    } catch (interrupted: InterruptedException) {
        Thread.currentThread().interrupt()
        throw CancellationException("interrupted")
    }
}
