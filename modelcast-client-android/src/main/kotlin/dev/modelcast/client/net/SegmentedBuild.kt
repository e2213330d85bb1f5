package dev.modelcast.client.net

import dev.modelcast.client.ClientError
import dev.modelcast.client.quoted
import java.nio.file.Path
import java.security.MessageDigest
import java.util.concurrent.CancellationException
import java.util.concurrent.ExecutionException
import java.util.concurrent.ExecutorCompletionService
import java.util.concurrent.Executors
import java.util.concurrent.Future

/**
 * Builds a new version of a file from the old one and single-range requests, as a
 * [SegmentPlan] says: segments the old file holds are copied, the others fetched, one
 * request per run of them, a few runs at once. Every segment is hashed before it is written
 * at its place, copies included; one that fails is fetched once more on its own. The whole
 * file must then hash to the layout's SHA-256. The first run is asked for alone: a server
 * that ignores Range answers it with the whole file (a 200, as stored), which is kept as
 * the download. A server that does not answer a range exactly (a 416 or 501, another
 * Content-Range, an encoding, a 200 after a 206) ends the build early, so the caller
 * downloads the file whole instead (and only then).
 *
 * The part file keeps its proven segments across a crash: a build that finds a part of the
 * artifact's size keeps every segment already in place that hashes right, and copies or
 * fetches only the rest.
 */
class SegmentedBuild(private val http: HttpStream, val parallelRequests: Int = 4) {
    init {
        if (parallelRequests < 1) throw ClientError.Configuration("parallelRequests $parallelRequests must be 1 or more")
    }

    /** What a build did. */
    sealed class Outcome {
        /** Built from copies and ranges: `fetchedBytes` received (repairs included); `keptBytes` a crashed build had left in place. */
        data class Built(val fetchedBytes: Long, val requests: Int, val keptBytes: Long) : Outcome()

        /** The server answered the first range with the whole file (a 200, as stored): it was kept as a plain download. */
        data class Whole(val fetchedBytes: Long) : Outcome()

        /** The server cannot serve the plan's ranges, or a segment failed twice: download the file whole. */
        data class FallBack(val reason: String) : Outcome()
    }

    /**
     * Writes the file `layout` describes to `part` from the old version's bytes (`seed`,
     * where the plan's copies read) and `url`.
     * @throws ClientError a network or disk failure mid-build (the caller downloads whole).
     */
    fun build(plan: SegmentPlan, layout: SegmentLayout, url: String, seed: SeedBytes, part: Path, cancellation: Cancellation? = null): Outcome {
        PositionalFile.openForWriting(part).use { output ->
            val kept = layout.segmentsInPlace(output)
            output.truncate(layout.artifactSize)
            val runs = plan.steps.filterIsInstance<SegmentPlan.Step.Fetch>().flatMap { layout.missing(it.first, it.end, kept) }
            var fetched = 0L
            var requests = 0
            var whole = false
            try {
                // The first run alone, before any copy: a server that ignores Range answers it
                // with the whole file, which is then kept as the download (one request, not
                // four, and no seed copied for nothing).
                if (runs.isNotEmpty()) {
                    val probe = fetchRun(runs[0], layout, url, output, acceptWhole = true, cancellation = cancellation)
                    fetched = probe.bytes
                    requests = probe.requests
                    whole = probe.whole
                }
                if (!whole) {
                    for (step in plan.steps) {
                        if (step !is SegmentPlan.Step.Copy) continue
                        cancellation?.throwIfCancelled()
                        layout.copy(seed, step.source, output, step.offset, step.length, kept)
                    }
                    boundedEach(runs.drop(1), cancellation, { run, child -> fetchRun(run, layout, url, output, false, child) }) { result ->
                        fetched += result.bytes
                        requests += result.requests
                    }
                }
            } catch (refusal: RangeRefused) {
                return Outcome.FallBack(refusal.reason)
            }
            val digest = layout.digest(output)
            if (whole) {
                if (digest != layout.artifactSha256) return Outcome.FallBack("the whole file sent for a range is not the indexed file")
                output.force()
                return Outcome.Whole(fetched)
            }
            if (digest != layout.artifactSha256) {
                throw ClientError.Io(part.toString(), "the built file hashes to $digest, not the index's ${layout.artifactSha256}")
            }
            output.force()
            val keptBytes = kept.fold(0L) { total, number -> total + layout.segments[number].length }
            return Outcome.Built(fetched, requests, keptBytes)
        }
    }

    /** What fetching a run cost. */
    private class RunResult(val bytes: Long, val requests: Int, val whole: Boolean)

    /**
     * Fetches one run of segments; a segment that arrives damaged is fetched again on its own
     * (once). With `acceptWhole`, a 200 carrying the file as stored is written whole instead.
     */
    private fun fetchRun(run: IntRange, layout: SegmentLayout, url: String, output: PositionalFile, acceptWhole: Boolean,
                         cancellation: Cancellation?): RunResult {
        val first = fetch(run.first, run.last + 1, layout, url, output, acceptWhole, cancellation)
        if (first.whole) return RunResult(first.received, 1, true)
        if (first.failed.size > MAX_REPAIRS) throw RangeRefused("${first.failed.size} segments of one response failed their SHA-256")
        var received = first.received
        var requests = 1
        for (segment in first.failed) {
            val again = fetch(segment, segment + 1, layout, url, output, false, cancellation)
            received += again.received
            requests += 1
            if (again.failed.isNotEmpty()) throw RangeRefused("segment $segment failed its SHA-256 twice")
        }
        return RunResult(received, requests, false)
    }

    /** Fetches segments `first until end` in one request, writing each that hashes right at its place. */
    private fun fetch(first: Int, end: Int, layout: SegmentLayout, url: String, output: PositionalFile, acceptWhole: Boolean,
                      cancellation: Cancellation?): RangeReceiver {
        val start = layout.segments[first].offset
        val last = layout.end(end - 1) - 1
        val receiver = RangeReceiver(layout, first, end, output, "bytes $start-$last/${layout.artifactSize}", acceptWhole)
        http.get(HttpRequest(url, mapOf("Range" to "bytes=$start-$last")), metadata = false, receiver = receiver, cancellation = cancellation)
        receiver.finish()
        return receiver
    }

    /**
     * Runs `body` over `items`, at most [parallelRequests] at once, handing each result to
     * `combine` on this thread; the first error cancels the others and is thrown.
     */
    private fun <T> boundedEach(items: List<IntRange>, cancellation: Cancellation?, body: (IntRange, Cancellation) -> T, combine: (T) -> Unit) {
        if (items.isEmpty()) return
        val child = Cancellation()
        val registration = cancellation?.register { child.cancel() }
        val pool = Executors.newFixedThreadPool(Math.min(parallelRequests, items.size)) { task ->
            Thread(task, "modelcast-segments").apply { isDaemon = true }
        }
        try {
            val results = ExecutorCompletionService<T>(pool)
            val futures = ArrayList<Future<T>>()
            var next = 0
            fun submit() {
                val item = items[next++]
                futures.add(results.submit { body(item, child) })
            }
            while (next < items.size && next < parallelRequests) submit()
            var done = 0
            while (done < items.size) {
                val result = try {
                    results.take().get()
                } catch (failure: ExecutionException) {
                    child.cancel()
                    throw failure.cause ?: failure
                } catch (interrupted: InterruptedException) {
                    child.cancel()
                    Thread.currentThread().interrupt()
                    throw CancellationException("interrupted")
                }
                done += 1
                combine(result)
                if (next < items.size) submit()
            }
        } finally {
            registration?.remove()
            pool.shutdown()
        }
    }

    private companion object {
        /** Failed segments a run may refetch before the build gives up on ranges. */
        const val MAX_REPAIRS = 4
    }
}

/** The server did not answer a range exactly (or kept sending damaged segments): the build stops and the file is fetched whole. */
internal class RangeRefused(val reason: String) : Exception(reason)

/**
 * One range response: its head checked, its bytes collected into the segments it carries;
 * each whole segment that hashes right is written at its place, one that does not is noted
 * to be fetched again. A 200 where `acceptWhole` is taken as the file as stored.
 */
private class RangeReceiver(
    private val layout: SegmentLayout,
    private val first: Int,
    private val end: Int,
    private val output: PositionalFile,
    private val expected: String,
    private val acceptWhole: Boolean
) : BodyReceiver {
    var received = 0L
        private set
    val failed = ArrayList<Int>()
    var whole = false
        private set
    private var current = first
    private var filled = 0
    private var segment = ByteArray(0)
    private val digest: MessageDigest = sha256()
    private val span = layout.end(end - 1) - layout.segments[first].offset

    override fun onResponse(response: HttpResponse) {
        val encoding = asciiLowercase(response.header("Content-Encoding") ?: "identity")
        if (acceptWhole && response.status == 200 && encoding == "identity") {
            whole = true
            return
        }
        if (response.status != 206) throw RangeRefused("HTTP ${response.status} to a Range request for $expected")
        val range = response.header("Content-Range") ?: ""
        if (range != expected) throw RangeRefused("Content-Range ${quoted(range)}, expected '$expected'")
        if (encoding != "identity") throw RangeRefused("Content-Encoding ${quoted(encoding)} on a range")
        var longest = 0
        for (number in first until end) longest = Math.max(longest, layout.segments[number].length)
        segment = ByteArray(longest)
    }

    override fun onData(buffer: ByteArray, count: Int) {
        if (whole) {
            if (received + count > layout.artifactSize) throw RangeRefused("a 200 body longer than the file")
            output.write(buffer, received, 0, count)
            received += count
            return
        }
        var at = 0
        while (at < count) {
            if (current >= end) throw RangeRefused("more bytes than the range asked for")
            val length = layout.segments[current].length
            val take = Math.min(length - filled, count - at)
            System.arraycopy(buffer, at, segment, filled, take)
            filled += take
            at += take
            received += take
            if (filled == length) {
                if (layout.proves(segment, current, 0, length, digest)) output.write(segment, layout.segments[current].offset, 0, length)
                else failed.add(current)
                filled = 0
                current += 1
            }
        }
    }

    override fun readLimit(): Long = (if (whole) layout.artifactSize else span) - received + 1

    /** Once the response ended: every segment (or the whole file) must have arrived. */
    fun finish() {
        if (whole) {
            if (received != layout.artifactSize) throw RangeRefused("a 200 body of $received bytes, not the file's ${layout.artifactSize}")
            return
        }
        if (current != end) throw RangeRefused("the response ended inside segment $current")
    }
}
