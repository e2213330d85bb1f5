package dev.modelcast.client.net

import dev.modelcast.client.ClientError
import dev.modelcast.client.quoted
import java.io.IOException
import java.nio.file.Files
import java.nio.file.Path
import java.nio.file.StandardCopyOption
import java.util.concurrent.CancellationException

/**
 * Downloads a file by its segments when its segment index is known and an older version
 * of it is installed: the segments the old file holds are copied from it, only the others
 * are fetched ([SegmentedBuild]). The index is fetched and proven here by its size and
 * SHA-256 (decoding it is the format's job); the old file only says where to look, since
 * every copied segment is hashed against the new index. Anything short of a proven file
 * ends in the plain download ([Downloader]).
 *
 * @param downloads the client's `downloads/` directory: the part file is `<sha256>.delta`,
 *   the result `<sha256>`, as the plain download's.
 */
class DeltaDownload(private val http: HttpStream, val downloads: Path, val parallelRequests: Int = 4) {
    /** What a segmented build cost. `whole`: the server sent the whole file for the first range (it ignores Range). */
    data class Built(val path: Path, val fetchedBytes: Long, val requests: Int, val whole: Boolean)

    /**
     * The segment index at `url`, read up to `size` bytes (a metadata request), proven by
     * its size and SHA-256: the bytes to decode.
     * @throws ClientError [ClientError.Http] unless a 200, [ClientError.TooLarge] past its size,
     *   [ClientError.HashMismatch] naming the index's URL, or a network error.
     */
    fun indexBytes(url: String, size: Long, sha256: String, model: String, cancellation: Cancellation? = null): ByteArray {
        if (!isSha256Hex(sha256)) throw ClientError.InvalidManifest(url, "sha256", sha256, "is not a SHA-256 digest (64 lowercase hexadecimal digits)")
        val answer = http.small(HttpRequest(url), SmallObject.SEGMENT_INDEX, size, cancellation)
        if (answer.response.status != 200) throw ClientError.Http(url, answer.response.status)
        val digest = hex(sha256().digest(answer.body))
        if (answer.body.size.toLong() != size || digest != sha256) throw ClientError.HashMismatch(model, url, sha256, digest)
        return answer.body
    }

    /**
     * [indexBytes], or null when the server cannot give it (an error status, a dropped
     * connection, other bytes): the file is then downloaded whole. A body past the index's
     * size, or one abandoned as too slow or past its deadline, is the server misbehaving,
     * not missing an index: that error is thrown (as a cancel is).
     */
    fun indexBytesIfServed(url: String, size: Long, sha256: String, model: String, cancellation: Cancellation? = null): ByteArray? = try {
        indexBytes(url, size, sha256, model, cancellation)
    } catch (error: ClientError) {
        when (error) {
            is ClientError.TooLarge, is ClientError.TooSlow, is ClientError.DeadlineExceeded -> throw error
            else -> null
        }
    }

    /**
     * Builds `file` at `downloads/<sha256>` from `seed` (the installed older version's bytes)
     * and range requests; null when the plan fetches most of the file or the server cannot
     * serve it (the caller then downloads it whole). The part file (`<sha256>.delta`)
     * survives a crash or a cancel, and the next build keeps its proven segments; any other
     * end removes it.
     * @throws CancellationException when cancelled.
     */
    fun build(file: RemoteFile, layout: SegmentLayout, plan: SegmentPlan, seed: SeedBytes, cancellation: Cancellation? = null): Built? {
        if (layout.artifactSize != file.size || layout.artifactSha256 != file.sha256) {
            throw ClientError.InvalidManifest(file.url, "segment index", null, "describes another file than ${quoted(file.name)}")
        }
        if (plan.prefersFullDownload) return null
        val part = downloads.resolve(file.sha256 + ".delta")
        val outcome = try {
            Files.createDirectories(downloads)
            SegmentedBuild(http, parallelRequests).build(plan, layout, file.url, seed, part, cancellation)
        } catch (cancelled: CancellationException) {
            throw cancelled
        } catch (error: ClientError) {
            deleteTreeQuietly(part)
            return null // a network or disk failure mid-build: the plain download decides
        } catch (error: IOException) {
            deleteTreeQuietly(part)
            return null
        }
        val (fetched, requests, whole) = when (outcome) {
            is SegmentedBuild.Outcome.Built -> Triple(outcome.fetchedBytes, outcome.requests, false)
            is SegmentedBuild.Outcome.Whole -> Triple(outcome.fetchedBytes, 1, true)
            is SegmentedBuild.Outcome.FallBack -> {
                deleteTreeQuietly(part)
                return null
            }
        }
        val complete = downloads.resolve(file.sha256)
        try {
            Files.move(part, complete, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE)
        } catch (error: IOException) {
            throw ClientError.Io(complete.toString(), ioReason(error))
        }
        return Built(complete, fetched, requests, whole)
    }
}
