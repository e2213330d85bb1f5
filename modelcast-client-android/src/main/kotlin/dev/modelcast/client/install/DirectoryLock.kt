package dev.modelcast.client.install

import dev.modelcast.client.ClientError
import dev.modelcast.client.net.Cancellation
import dev.modelcast.client.net.ioReason
import java.io.Closeable
import java.io.IOException
import java.nio.channels.FileChannel
import java.nio.channels.FileLock
import java.nio.channels.OverlappingFileLockException
import java.nio.file.Files
import java.nio.file.Path
import java.nio.file.StandardOpenOption
import java.util.concurrent.CancellationException

/**
 * The client directory's lock: a `FileChannel` lock on `DIR/state.lock`, held while a call
 * reads and changes the state (an update, a request, a check, a revert), so an app and its
 * extension (or two processes, or two updaters of one process) running the client on one
 * directory take turns instead of downloading into the same files and switching the same
 * links. The system drops the lock when its holder dies (even by SIGKILL), so a crash never
 * leaves the directory locked; the file itself stays (removing it would race).
 *
 * Within one process, a second holder sees the first's lock as taken (the JDK refuses an
 * overlapping lock), so it waits as another process would.
 */
class DirectoryLock private constructor(private val key: Path, private val channel: FileChannel, private val lock: FileLock) : Closeable {
    private var released = false

    /** Lets the lock go (idempotent). */
    @Synchronized
    fun release() {
        if (released) return
        released = true
        synchronized(HELD) {
            val count = (HELD[key] ?: 1) - 1
            if (count > 0) HELD[key] = count else HELD.remove(key)
        }
        try {
            lock.release()
        } catch (error: IOException) {
        } finally {
            try { channel.close() } catch (error: IOException) {}
        }
    }

    override fun close() = release()

    companion object {
        /** The lock file's name in the client's directory. */
        const val FILE_NAME = "state.lock"
        /** How often a waiting call tries again (a file lock has no timed wait). */
        const val POLL_MILLIS = 50L

        /** The directories whose lock a holder of this process has, with how many holders. */
        private val HELD = HashMap<Path, Int>()

        /**
         * Takes the lock of `directory` (created if missing), waiting for another holder at
         * most `timeoutSeconds` (0: not at all).
         * @throws ClientError.DirectoryBusy once the wait is over, having changed nothing.
         * @throws ClientError.Io when the lock file cannot be opened.
         * @throws CancellationException when `cancellation` is cancelled or the thread interrupted while waiting.
         */
        fun acquire(directory: Path, timeoutSeconds: Double, cancellation: Cancellation? = null): DirectoryLock {
            if (!(timeoutSeconds >= 0 && timeoutSeconds < 1e9)) throw ClientError.Configuration("directoryLockTimeout $timeoutSeconds must be a number of seconds, 0 or more")
            val path = directory.resolve(FILE_NAME)
            val channel = try {
                Files.createDirectories(directory)
                FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE)
            } catch (error: IOException) {
                throw ClientError.Io(path.toString(), ioReason(error))
            }
            val started = System.nanoTime()
            try {
                while (true) {
                    cancellation?.throwIfCancelled()
                    val lock = try {
                        channel.tryLock()
                    } catch (held: OverlappingFileLockException) {
                        null // a holder in this process
                    }
                    if (lock != null) {
                        val key = key(directory)
                        synchronized(HELD) { HELD[key] = (HELD[key] ?: 0) + 1 }
                        return DirectoryLock(key, channel, lock)
                    }
                    if ((System.nanoTime() - started) / 1e9 >= timeoutSeconds) {
                        throw ClientError.DirectoryBusy(directory.toString(), timeoutSeconds)
                    }
                    try {
                        Thread.sleep(POLL_MILLIS)
                    } catch (interrupted: InterruptedException) {
                        Thread.currentThread().interrupt()
                        throw CancellationException("interrupted")
                    }
                }
            } catch (error: Throwable) {
                try { channel.close() } catch (ignored: IOException) {}
                if (error is IOException) throw ClientError.Io(path.toString(), ioReason(error))
                throw error
            }
        }

        /** True while a holder of this process has the lock of `directory` (an update under way here). */
        fun isHeldInThisProcess(directory: Path): Boolean = synchronized(HELD) { HELD.containsKey(key(directory)) }

        private fun key(directory: Path): Path = try {
            directory.toRealPath()
        } catch (error: IOException) {
            directory.toAbsolutePath().normalize()
        }
    }
}
