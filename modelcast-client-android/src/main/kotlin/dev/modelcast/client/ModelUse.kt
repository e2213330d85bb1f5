package dev.modelcast.client

import dev.modelcast.client.install.Installer
import dev.modelcast.client.install.Json
import dev.modelcast.client.install.JsonError
import java.io.IOException
import java.nio.file.Path

/**
 * Which models the app is using now (in this process: [ModelUpdater.beginUse] and
 * [ModelUpdater.endUse], counted, so nested uses hold it) and when each was last begun
 * (`usage.json`, milliseconds since the epoch, kept across launches): a model in use is never
 * evicted, and among the rest the least recently used goes first. The time is a hint: a
 * file that cannot be written or read loses the order, never a model in use.
 */
internal class ModelUse(private val path: Path) {
    private val lock = Any()
    private val uses = HashMap<String, Int>()

    fun begin(model: String, now: Long) = synchronized(lock) {
        uses[model] = (uses[model] ?: 0) + 1
        RecordFileLock.updating(path) {
            val times = LinkedHashMap(lastUses())
            times[model] = now
            try { Installer.writeAtomically(path, Json.write(times)) } catch (error: IOException) {}
        }
    }

    fun end(model: String) = synchronized(lock) {
        val count = uses[model] ?: return@synchronized
        if (count <= 1) uses.remove(model) else uses[model] = count - 1
    }

    /** The models begun and not ended. */
    fun inUse(): Set<String> = synchronized(lock) { HashSet(uses.keys) }

    /** Model → when it was last begun (ms since the epoch), as recorded. */
    fun lastUses(): Map<String, Long> = synchronized(lock) {
        val root = readRecordObject(path, MAX_BYTES, "usage") ?: return@synchronized emptyMap()
        root.keys().mapNotNull { key -> (try { root.long(key) } catch (error: JsonError) { null })?.let { key to it } }.toMap()
    }

    companion object {
        /** The file's name in the client's directory. */
        const val FILE_NAME = "usage.json"
        const val MAX_BYTES = 4L shl 20
    }
}
