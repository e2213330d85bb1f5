package dev.modelcast.client.net

import dev.modelcast.client.ClientError
import java.util.concurrent.ScheduledExecutorService
import java.util.concurrent.ScheduledFuture
import java.util.concurrent.TimeUnit

/**
 * Holds one request to its [TransferBounds] with timers (a chunk only adds to a count: no
 * clock read per chunk). At the end of each window from the request's start it compares
 * the bytes taken in that window with `minimumRate × window`; a metadata request is ended
 * at its deadline. Either way the request fails with [ClientError.TooSlow] or
 * [ClientError.DeadlineExceeded], which releases its caller at once and disconnects its
 * connection. A body that ends within its first window is never judged.
 */
internal class TransferWatch(request: PendingRequest, bounds: TransferBounds, metadata: Boolean, scheduler: ScheduledExecutorService) {
    private val timers = ArrayList<ScheduledFuture<*>>()

    init {
        if (bounds.minimumRate > 0) {
            val window = bounds.windowSeconds
            val needed = bounds.bytesPerWindow
            val period = Math.max(1L, Math.round(window * 1000))
            var counted = 0L
            timers.add(scheduler.scheduleAtFixedRate({
                val taken = request.bytesTaken
                val inWindow = taken - counted
                counted = taken
                if (inWindow < needed) {
                    request.fail(ClientError.TooSlow(request.url, inWindow, window, bounds.minimumRate))
                }
            }, period, period, TimeUnit.MILLISECONDS))
        }
        if (metadata) {
            val deadline = bounds.metadataDeadlineSeconds
            timers.add(scheduler.schedule({
                request.fail(ClientError.DeadlineExceeded(request.url, request.bytesTaken, deadline))
            }, Math.max(1L, Math.round(deadline * 1000)), TimeUnit.MILLISECONDS))
        }
    }

    /** Stops the timers (the request ended). */
    fun stop() {
        for (timer in timers) timer.cancel(false)
    }
}
