package dev.modelcast.client

import dev.modelcast.client.install.Json
import dev.modelcast.client.install.JsonError
import dev.modelcast.client.install.JsonObject
import java.io.IOException
import java.nio.charset.StandardCharsets
import java.nio.file.Files
import java.nio.file.LinkOption
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

/**
 * The JSON object a small record file holds (`licences.json`, `usage.json`), or null when it
 * is missing, larger than [maxBytes], unreadable or not an object: a record that cannot be
 * read counts as empty (the user is asked again, an eviction order is lost), never as a failure.
 */
internal fun readRecordObject(path: Path, maxBytes: Long, what: String): JsonObject? {
    if (!Files.isRegularFile(path, LinkOption.NOFOLLOW_LINKS)) return null
    return try {
        if (Files.size(path) > maxBytes) return null
        JsonObject.asObject(Json.parse(String(Files.readAllBytes(path), StandardCharsets.UTF_8)), what)
    } catch (error: IOException) {
        null
    } catch (error: JsonError) {
        null
    }
}
