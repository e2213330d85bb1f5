package dev.modelcast.client

import java.io.IOException
import java.nio.channels.FileChannel
import java.nio.file.Path
import java.nio.file.StandardOpenOption
import java.util.concurrent.ConcurrentHashMap

/**
 * A read-modify-write of one of the client's small record files (`licences.json`,
 * `usage.json`) held under a lock on `FILE.lock`, so two processes sharing the directory
 * (an app and a second process) that record at once both keep their entry: each reads the
 * other's write before it adds its own. A JVM holds a file lock for the whole process, so
 * updaters of one process take a monitor per file first. Without a lock file (a read-only
 * volume) the update goes ahead unlocked: its write then says what failed.
 */
internal object RecordFileLock {
    private val monitors = ConcurrentHashMap<String, Any>()

    fun <T> updating(record: Path, body: () -> T): T {
        val key = record.toAbsolutePath().normalize().toString()
        val monitor = monitors.getOrPut(key) { Any() }
        synchronized(monitor) {
            val channel = try {
                FileChannel.open(record.resolveSibling(record.fileName.toString() + ".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE)
            } catch (error: IOException) {
                return body()
            }
            try {
                val lock = channel.lock()
                try { return body() } finally { lock.release() }
            } finally {
                channel.close()
            }
        }
    }
}
