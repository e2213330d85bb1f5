package dev.modelcast.client.net

import dev.modelcast.client.ClientError

/**
 * The time a request may take, the twin of the Swift client's `requestTimeout` and
 * `TransferBounds`: an idle timeout (which every byte resets, so a trickle never reaches it),
 * a minimum rate over each window from the request's start (which ends a trickle), and a
 * deadline from start to last byte for metadata (the manifest, its signature, a segment
 * index), however fast its bytes come.
 *
 * @property connectTimeoutSeconds how long a connection may take to open.
 * @property idleTimeoutSeconds how long a request may wait for data before it counts as dropped.
 * @property minimumRate bytes per second a body must average over each window; 0 turns the check off.
 * @property windowSeconds seconds each average is taken over, each window from the request's start.
 * @property metadataDeadlineSeconds seconds a metadata request may take from its start to its last byte.
 */
data class TransferBounds(
    val connectTimeoutSeconds: Double = 30.0,
    val idleTimeoutSeconds: Double = 30.0,
    val minimumRate: Long = 1024,
    val windowSeconds: Double = 30.0,
    val metadataDeadlineSeconds: Double = 60.0
) {
    init {
        positive("connectTimeoutSeconds", connectTimeoutSeconds)
        positive("idleTimeoutSeconds", idleTimeoutSeconds)
        positive("windowSeconds", windowSeconds)
        positive("metadataDeadlineSeconds", metadataDeadlineSeconds)
        if (minimumRate < 0) throw ClientError.Configuration("minimumRate $minimumRate must not be negative")
    }

    /** The bytes a window must bring: `minimumRate × windowSeconds`. */
    internal val bytesPerWindow: Double get() = minimumRate.toDouble() * windowSeconds

    private companion object {
        // HttpURLConnection takes whole milliseconds as an Int: a bound it cannot hold is a mistake.
        const val LARGEST = Int.MAX_VALUE / 1000.0

        fun positive(field: String, seconds: Double) {
            if (!(seconds > 0 && seconds <= LARGEST)) {
                throw ClientError.Configuration("$field $seconds must be a number of seconds above 0 and at most ${LARGEST.toLong()}")
            }
        }
    }
}

/** Whole milliseconds, at least 1 (0 means "no timeout" to HttpURLConnection). */
internal fun millis(seconds: Double): Int = Math.max(1L, Math.round(seconds * 1000)).toInt()
