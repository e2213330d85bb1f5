package dev.modelcast.client.net

import dev.modelcast.client.ClientError
import dev.modelcast.client.quoted
import java.io.IOException
import java.nio.ByteBuffer
import java.nio.channels.FileChannel
import java.nio.charset.StandardCharsets
import java.nio.file.Files
import java.nio.file.LinkOption
import java.nio.file.Path
import java.nio.file.StandardCopyOption
import java.nio.file.StandardOpenOption
import java.security.MessageDigest
import java.util.UUID
import java.util.concurrent.ArrayBlockingQueue
import java.util.concurrent.CancellationException
import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.atomic.AtomicBoolean

/**
 * Downloads one file of a release to `downloads/<sha256>`: streamed to disk with its SHA-256
 * computed as it is written, never past its size, and resumed from `downloads/<sha256>.part`
 * after a dropped connection or an app restart (`Range: bytes=N-` with `If-Range`, the
 * validator — the first answer's ETag, else its Last-Modified — kept in `<sha256>.etag`;
 * a 206 must continue exactly where the part file ends). Only a file whose bytes hash to
 * the expected SHA-256 becomes `downloads/<sha256>`.
 *
 * A dropped connection, a server error (5xx), a resume the server cannot continue and an
 * attempt abandoned below the minimum rate ([ClientError.TooSlow]) are tried again,
 * resuming, [retries] times after a backoff (0.2 s, 0.4 s…); a file assembled from a kept
 * partial that fails its digest is downloaded again from nothing. The same rules as the
 * Swift client's `Downloader`.
 *
 * @param directory the client's `downloads/` directory.
 */
class Downloader(
    val directory: Path,
    private val http: HttpStream,
    val retries: Int = 3,
    private val backoffMillis: Long = 200
) {
    init {
        if (retries < 0) throw ClientError.Configuration("retries $retries must not be negative")
    }

    /** `downloads/<sha256><suffix>`: the digest is checked (64 lowercase hex digits), so the path stays in the directory. */
    fun path(sha256: String, suffix: String = ""): Path {
        if (!isSha256Hex(sha256)) throw ClientError.Configuration("${quoted(sha256)} is not a SHA-256 digest (64 lowercase hexadecimal digits)")
        if (suffix !in SUFFIXES) throw ClientError.Configuration("${quoted(suffix)} is not a download's suffix")
        return directory.resolve(sha256 + suffix)
    }

    /** Bytes of `file` already on disk, complete or partial (what a resume would not fetch again). */
    fun bytesOnDisk(file: RemoteFile): Long {
        regularFileSize(path(file.sha256))?.let { return it }
        return Math.min(regularFileSize(path(file.sha256, PART)) ?: 0L, file.size)
    }

    /**
     * The proven file, `downloads/<sha256>`, downloading what is missing. `progress` gets the
     * bytes on disk (resumed bytes included), on the request's thread, every 512 KiB or so.
     * @throws ClientError [ClientError.HashMismatch], [ClientError.SizeMismatch],
     *   [ClientError.Http], [ClientError.Network], [ClientError.BadRangeResponse],
     *   [ClientError.TooSlow] (after the retries), [ClientError.Io].
     * @throws CancellationException once `cancellation` is cancelled (the partial file is kept).
     */
    fun fetch(file: RemoteFile, cancellation: Cancellation? = null, progress: ((Long) -> Unit)? = null): Path {
        val complete = path(file.sha256)
        if (regularFileSize(complete) == file.size && sha256Hex(complete) == file.sha256) return complete
        deleteTreeQuietly(complete)
        var attempt = 0
        while (true) {
            cancellation?.throwIfCancelled()
            if (Thread.currentThread().isInterrupted) throw CancellationException("interrupted")
            // Bytes kept from an earlier attempt or launch: if the whole fails its digest,
            // they may be what was wrong, so one more attempt starts from nothing.
            val hadPartial = (regularFileSize(path(file.sha256, PART)) ?: 0L) > 0
            try {
                return attemptDownload(file, cancellation, progress)
            } catch (error: ClientError) {
                if (error is ClientError.HashMismatch) {
                    if (hadPartial && attempt < retries) {
                        attempt += 1
                        continue
                    }
                    throw error
                }
                if (attempt >= retries || !(error.isRetriable || error is ClientError.TooSlow)) throw error
                attempt += 1
                if (error is ClientError.BadRangeResponse) {
                    // The partial file cannot be continued: start it again.
                    deleteTreeQuietly(path(file.sha256, PART))
                    deleteTreeQuietly(path(file.sha256, VALIDATOR))
                }
                pause(backoffMillis * attempt, cancellation)
            }
        }
    }

    /**
     * Removes every download, finished or partial (once an update is installed), except those
     * of the digests `keeping` names: files a later call resumes.
     */
    fun removeAll(keeping: Set<String> = emptySet()) {
        if (keeping.isEmpty()) {
            deleteTreeQuietly(directory)
            return
        }
        val entries = try { Files.newDirectoryStream(directory).use { stream -> stream.toList() } } catch (error: IOException) { return }
        for (entry in entries) {
            val name = entry.fileName.toString()
            if (name.length < 64 || name.substring(0, 64) !in keeping) deleteTreeQuietly(entry)
        }
    }

    private fun attemptDownload(file: RemoteFile, cancellation: Cancellation?, progress: ((Long) -> Unit)?): Path {
        val part = path(file.sha256, PART)
        try {
            Files.createDirectories(directory)
        } catch (error: IOException) {
            throw ClientError.Io(directory.toString(), ioReason(error))
        }
        val channel = try {
            FileChannel.open(part, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)
        } catch (error: IOException) {
            throw ClientError.Io(part.toString(), "cannot open for writing: ${ioReason(error)}")
        }
        val digest = channel.use { receive(file, it, cancellation, progress) }
        return finish(file, digest)
    }

    /** Brings the part file to the whole file (what it lacks from the server); returns its digest, forced to disk. */
    private fun receive(file: RemoteFile, channel: FileChannel, cancellation: Cancellation?, progress: ((Long) -> Unit)?): ByteArray {
        val part = path(file.sha256, PART)
        val attempt = try {
            DownloadAttempt(file, part, channel, path(file.sha256, VALIDATOR), progress).also { it.hashKeptBytes() }
        } catch (error: IOException) {
            throw ClientError.Io(part.toString(), ioReason(error))
        }
        if (attempt.written < file.size) {
            // The validator goes with the bytes it came with: none without a partial.
            val validator = if (attempt.written > 0) readValidator(path(file.sha256, VALIDATOR)) else null
            val headers = LinkedHashMap<String, String>()
            if (attempt.written > 0) {
                headers["Range"] = "bytes=${attempt.written}-"
                if (validator != null) headers["If-Range"] = validator
            }
            try {
                http.get(HttpRequest(file.url, headers), metadata = false, receiver = attempt, cancellation = cancellation)
            } catch (error: Throwable) {
                // What arrived is kept for a resume: written out before the channel closes.
                try { attempt.drain() } catch (ignored: ClientError) {}
                throw error
            }
            attempt.drain()
            progress?.invoke(attempt.written)
            if (attempt.written != file.size) {
                throw ClientError.Network(file.url, "the body ended after ${attempt.written} of ${file.size} bytes")
            }
        }
        try {
            channel.force(true)
        } catch (error: IOException) {
            throw ClientError.Io(part.toString(), ioReason(error))
        }
        return attempt.digest.digest()
    }

    /**
     * Proves the complete part file by its digest and renames it into place; a wrong one is
     * deleted with its validator (the next attempt starts over).
     */
    private fun finish(file: RemoteFile, digest: ByteArray): Path {
        val part = path(file.sha256, PART)
        val actual = hex(digest)
        if (actual != file.sha256) {
            deleteTreeQuietly(part)
            deleteTreeQuietly(path(file.sha256, VALIDATOR))
            throw ClientError.HashMismatch(file.model, file.name, file.sha256, actual)
        }
        val complete = path(file.sha256)
        try {
            Files.move(part, complete, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE)
        } catch (error: IOException) {
            throw ClientError.Io(complete.toString(), ioReason(error))
        }
        deleteTreeQuietly(path(file.sha256, VALIDATOR))
        return complete
    }

    internal companion object {
        const val PART = ".part"
        const val VALIDATOR = ".etag"
        val SUFFIXES = setOf("", PART, VALIDATOR, ".delta")
        /**
         * A background sync is started after this many more bytes: the disk writes while
         * the network reads, and the final sync finds little left. 1 GiB from nginx on
         * loopback (BENCHMARKS.md): 8 MiB was the fastest of 4, 8, 16 and 64 MiB (64 MiB
         * took about 0.1 s longer; 4 MiB syncs too often).
         */
        const val SYNC_STEP = 8L shl 20

        /** Where background syncs run: one daemon thread for every download of the process. */
        val syncer: java.util.concurrent.ExecutorService = java.util.concurrent.Executors.newSingleThreadExecutor { task ->
            Thread(task, "modelcast-download-sync").apply { isDaemon = true }
        }

        /** Progress is reported after this many more bytes (and at the end). */
        const val PROGRESS_STEP = 512L shl 10
        /** The longest validator kept (an ETag or a date is far shorter). */
        const val MAX_VALIDATOR = 512

        /** A header value safe to send back: printable ASCII, no line break, not too long. */
        fun safeValidator(text: String?): String? =
            text?.takeIf { it.isNotEmpty() && it.length <= MAX_VALIDATOR && it.all { c -> c in ' '..'~' } }

        fun readValidator(path: Path): String? {
            val size = regularFileSize(path) ?: return null
            if (size > MAX_VALIDATOR) return null
            return try {
                safeValidator(String(Files.readAllBytes(path), StandardCharsets.US_ASCII))
            } catch (error: IOException) {
                null
            }
        }

        /** Keeps `validator` for the next resume (a temporary file renamed over the old one); a failure only costs a resume. */
        fun writeValidator(path: Path, validator: String?) {
            val safe = safeValidator(validator)
            if (safe == null) {
                deleteTreeQuietly(path)
                return
            }
            val temporary = path.resolveSibling(path.fileName.toString() + ".tmp-" + UUID.randomUUID())
            try {
                Files.write(temporary, safe.toByteArray(StandardCharsets.US_ASCII), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)
                Files.move(temporary, path, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE)
            } catch (error: IOException) {
                deleteTreeQuietly(temporary)
            }
        }
    }
}

/** True for the failures another attempt may get past: the network, a resume gone wrong, a server error. */
internal val ClientError.isRetriable: Boolean
    get() = when (this) {
        is ClientError.Network, is ClientError.BadRangeResponse -> true
        is ClientError.Http -> status in 500..599
        else -> false
    }

/**
 * One attempt's running state, and the receiver of its answer. The request's thread only
 * checks a chunk against the size and copies it into one of a few slots; a writer thread
 * hashes the slots and writes them at the end of the part file, in order. So reading the
 * network overlaps hashing and writing (on a phone as on a server, each takes about as
 * long as the other), at the cost of one copy and [SLOTS] MiB per download. The slots are
 * direct buffers: the file channel writes them as they are (a heap buffer is first copied
 * into a temporary direct one by the JDK). [drain] waits for the writer once the request
 * has ended: whatever arrived is then on the disk.
 */
private class DownloadAttempt(
    private val file: RemoteFile,
    private val part: Path,
    private val channel: FileChannel,
    private val validatorFile: Path,
    private val progress: ((Long) -> Unit)?
) : BodyReceiver {
    /** The digest of the bytes written (the writer's until [drain] returns). */
    val digest: MessageDigest = sha256()
    /** Bytes accepted: written, or in a slot on their way. */
    var written = 0L
        private set
    private var reported = 0L
    private val free = ArrayBlockingQueue<ByteBuffer>(SLOTS)
    private val full = ArrayBlockingQueue<ByteBuffer>(SLOTS + 1)
    private var writer: Thread? = null
    /** The writer's first failure (a full disk): the next chunk, or [drain], throws it. */
    @Volatile
    private var failure: ClientError? = null
    /** Bytes the writer wrote when it last started a background sync. */
    private var synced = 0L
    /** True while a background sync runs (at most one at a time). */
    private val syncing = AtomicBoolean(false)

    /** Hashes what an earlier attempt left in the part file (cut to nothing when it is longer than the file). */
    fun hashKeptBytes() {
        var kept = channel.size()
        if (kept > file.size) {
            channel.truncate(0)
            kept = 0
        }
        if (kept > 0) digestPrefix(channel, kept, digest, ByteBuffer.allocate(Math.min(kept, 1L shl 20).toInt()))
        written = kept
        reported = kept
        synced = kept
    }

    /** A 200 starts the file over (its length must be the file's); a 206 must continue it exactly; anything else fails. */
    override fun onResponse(response: HttpResponse) {
        val size = file.size
        when (response.status) {
            200 -> {
                if (written > 0) {
                    io { channel.truncate(0) }
                    digest.reset()
                    written = 0
                    synced = 0
                }
                val length = response.contentLength
                if (length != null && length != size) throw ClientError.SizeMismatch(file.model, file.name, size, length)
            }
            206 -> {
                val expected = "bytes $written-${size - 1}/$size"
                val range = response.header("Content-Range")
                if (written == 0L || range != expected) {
                    throw ClientError.BadRangeResponse(file.url, "Content-Range ${quoted(range ?: "")}, expected '$expected'")
                }
            }
            416 -> throw ClientError.BadRangeResponse(file.url, "HTTP 416 for bytes $written- of $size")
            else -> throw ClientError.Http(file.url, response.status)
        }
        io { channel.position(written) }
        Downloader.writeValidator(validatorFile, response.header("ETag") ?: response.header("Last-Modified"))
    }

    override fun onData(buffer: ByteArray, count: Int) {
        // Never past the promised size: more bytes are an error, not a longer file.
        if (written + count > file.size) throw ClientError.SizeMismatch(file.model, file.name, file.size, written + count)
        failure?.let { throw it }
        val slot = slot()
        slot.clearForAnyJava()
        slot.put(buffer, 0, count)
        slot.flipForAnyJava()
        full.put(slot)
        written += count
        if (progress != null && written - reported >= Downloader.PROGRESS_STEP) {
            reported = written
            progress.invoke(written)
        }
    }

    override fun readLimit(): Long = file.size - written + 1

    /** Waits until every accepted chunk is hashed and written; throws the writer's failure. */
    fun drain() {
        writer?.let { thread ->
            full.put(END)
            thread.join()
        }
        writer = null
        failure?.let { throw it }
    }

    /** A free slot, waiting for the writer when all are in use (the slots are made on first use). */
    private fun slot(): ByteBuffer {
        if (writer == null) {
            for (index in 0 until SLOTS) free.add(ByteBuffer.allocateDirect(SLOT_SIZE))
            writer = Thread({ write() }, "modelcast-download-writer").apply {
                isDaemon = true
                start()
            }
        }
        return free.take()
    }

    /** The writer: hashes and writes each slot in order until [END]. */
    private fun write() {
        // Where the first slot goes: the part file's position, set by the response's head.
        var done = channel.positionQuietly()
        while (true) {
            val slot = full.take()
            if (slot === END) return
            try {
                if (failure == null) {
                    digest.update(slot)
                    slot.rewindForAnyJava()
                    while (slot.hasRemaining()) channel.write(slot)
                    done += slot.limit()
                    if (done - synced >= Downloader.SYNC_STEP) {
                        synced = done
                        syncInBackground()
                    }
                }
            } catch (error: IOException) {
                failure = ClientError.Io(part.toString(), ioReason(error))
            } finally {
                free.put(slot)
            }
        }
    }

    /**
     * Starts writing what is written so far to the disk on another thread, so the final
     * sync (before the file is renamed into place) waits for the last piece only, not for a
     * whole model's bytes. A failure here is harmless: the final sync reports it.
     */
    private fun syncInBackground() {
        if (!syncing.compareAndSet(false, true)) return
        try {
            Downloader.syncer.execute {
                try {
                    if (channel.isOpen) channel.force(false)
                } catch (error: IOException) {
                } finally {
                    syncing.set(false)
                }
            }
        } catch (rejected: RejectedExecutionException) {
            syncing.set(false)
        }
    }

    private fun FileChannel.positionQuietly(): Long = try { position() } catch (error: IOException) { 0L }

    private inline fun io(body: () -> Unit) {
        try {
            body()
        } catch (error: IOException) {
            throw ClientError.Io(part.toString(), ioReason(error))
        }
    }

    private companion object {
        /** Chunks on their way to the disk at most (a chunk is at most one read: 1 MiB). */
        const val SLOTS = 3
        const val SLOT_SIZE = 1 shl 20
        /** Tells the writer the request has ended. */
        val END: ByteBuffer = ByteBuffer.allocate(0)
    }
}
