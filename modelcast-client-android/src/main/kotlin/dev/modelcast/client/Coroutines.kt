package dev.modelcast.client

import dev.modelcast.client.net.Cancellation
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext

/**
 * Runs the blocking [work] on [Dispatchers.IO] and cancels it with the calling coroutine:
 * a watcher child waits for the cancellation and hands it to [work]'s [Cancellation], which
 * closes the request under way at once (a blocked socket read does not see a thread
 * interrupt). Only public coroutine APIs of kotlinx.coroutines 1.0 are used.
 */
internal suspend fun <T> cancellable(work: (Cancellation) -> T): T = withContext(Dispatchers.IO) {
    val cancellation = Cancellation()
    val watcher = launch(start = CoroutineStart.UNDISPATCHED) {
        try {
            delay(Long.MAX_VALUE)
        } finally {
            cancellation.cancel()
        }
    }
    try {
        work(cancellation)
    } finally {
        watcher.cancel()
    }
}
