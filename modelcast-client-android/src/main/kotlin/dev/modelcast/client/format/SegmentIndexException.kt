package dev.modelcast.client.format

import dev.modelcast.client.ClientError

/**
 * A segment index that breaks the format: [problem] names the field and the value
 * (`segment 3 has length 0 (1...16777216 allowed)`). The caller that fetched it reports
 * [toClientError].
 */
class SegmentIndexException(val problem: String) : Exception(problem) {
    /** The client's error for the index served at [url]. */
    fun toClientError(url: String): ClientError.InvalidManifest = ClientError.InvalidManifest(url, "segment index", null, problem)
}
