package dev.modelcast.client.install

import dev.modelcast.client.net.PositionalFile
import dev.modelcast.client.net.SeedBytes
import dev.modelcast.client.net.regularFileSize
import java.io.Closeable
import java.io.IOException
import java.nio.charset.StandardCharsets
import java.nio.file.Files
import java.nio.file.LinkOption
import java.nio.file.Path
import java.nio.file.attribute.BasicFileAttributes

/** The largest segment index read back (the format's own bound: 116 bytes of header, 36 per segment, at most 2^20 segments). */
const val MAX_SEGMENT_INDEX_BYTES = 116L + 36L * (1L shl 20)

/** The largest stored-entry map read back (far more than [InstallSpace.MAX_ZIP_ENTRIES] entries need). */
private const val MAX_STORED_MAP_BYTES = 32L shl 20

/**
 * Keeps `index` (the proven bytes of a file's segment index) and, for a zipped directory,
 * where its stored entries lay in the zip, in the version being built at `staging`:
 * `.modelcast-segments/NAME.mcsx` and `NAME.stored.json`, as the Swift client does.
 */
internal fun keepSeed(index: ByteArray, stored: List<ZipLayout.StoredData>?, fileName: String, staging: Path) {
    val folder = staging.resolve(Installer.SEGMENTS_FOLDER)
    Files.createDirectories(folder)
    Files.write(folder.resolve("$fileName.mcsx"), index)
    if (stored != null) {
        val map = stored.map { mapOf("name" to it.name, "offset" to it.offset, "size" to it.size) }
        Installer.writeSynced(folder.resolve("$fileName.stored.json"), Json.write(map))
    }
}

/**
 * Every complete version of `model` kept on the device: the one in use first, then the others
 * (kept for a rollback) by directory name. Each may seed a segmented download.
 */
fun Installer.keptVersions(model: String): List<Path> {
    val current = current(model)
    val others = versions(model).sorted().map { versionsDirectory(model).resolve(it) }.filter { it != current }
    return (if (current != null) listOf(current) else emptyList()) + others
}

/**
 * The index kept for the file `fileName` of the version directory `version` (to decode: the
 * format's job), read only when it is no larger than an index can be. Nothing read here is
 * trusted: every segment a build copies is hashed again.
 */
fun keptIndex(version: Path, fileName: String): ByteArray? {
    if (Names.segmentProblem(fileName) != null) return null
    val path = version.resolve(Installer.SEGMENTS_FOLDER).resolve("$fileName.mcsx")
    val size = regularFileSize(path) ?: return null
    if (size > MAX_SEGMENT_INDEX_BYTES) return null
    return try { Files.readAllBytes(path) } catch (error: IOException) { null }
}

/** The names of the files of the version directory `version` whose index was kept, sorted (seeds for a file renamed between versions). */
fun keptIndexNames(version: Path): List<String> {
    return Installer.listNames(version.resolve(Installer.SEGMENTS_FOLDER)).filter { it.endsWith(".mcsx") }
        .map { it.substring(0, it.length - ".mcsx".length) }.filter { Names.segmentProblem(it) == null }.sorted()
}

/**
 * What a segmented download of a file can copy from, in the version directory `current`:
 * for a plain file (`zipped` false), the installed file `fileName` when it is a regular file
 * of `artifactSize` bytes and was not a zip; for a zipped directory, its unpacked stored
 * entries ([UnpackedZip]). Null when there is none. Close it when done.
 */
fun seedBytes(current: Path, fileName: String, zipped: Boolean, artifactSize: Long): SeedBytes? {
    if (Names.segmentProblem(fileName) != null) return null
    val storedMap = current.resolve(Installer.SEGMENTS_FOLDER).resolve("$fileName.stored.json")
    if (!zipped) {
        val bytes = current.resolve(fileName)
        if (regularFileSize(storedMap) != null || regularFileSize(bytes) != artifactSize) return null
        return try { PositionalFile.openForReading(bytes) } catch (error: Exception) { null }
    }
    val size = regularFileSize(storedMap) ?: return null
    if (size > MAX_STORED_MAP_BYTES) return null
    val parsed = try {
        Json.parse(String(Files.readAllBytes(storedMap), StandardCharsets.UTF_8)) as? List<*>
    } catch (error: Exception) {
        null
    } ?: return null
    val entries = ArrayList<Pair<ZipLayout.StoredData, Path>>()
    for (item in parsed) {
        val fields = JsonObject.asObject(item, "stored") ?: continue
        val entry = try {
            ZipLayout.StoredData(fields.string("name") ?: continue, fields.long("offset") ?: continue, fields.long("size") ?: continue)
        } catch (error: JsonError) {
            continue
        }
        if (entry.offset < 0 || entry.size <= 0 || Names.relativePathProblem(entry.name) != null) continue
        val path = Names.appended(current, entry.name)
        val attributes = try { Files.readAttributes(path, BasicFileAttributes::class.java, LinkOption.NOFOLLOW_LINKS) } catch (error: IOException) { continue }
        if (!attributes.isRegularFile || attributes.size() != entry.size) continue
        entries.add(Pair(entry, path))
    }
    return UnpackedZip(current.toString(), entries)
}

/**
 * A zipped directory as it was installed: the zip is gone, but each stored entry's bytes
 * are its unpacked file's bytes, so a segment lying inside one entry's data can be read
 * from that file. Reads of anything else come back empty.
 */
class UnpackedZip internal constructor(override val path: String, entries: List<Pair<ZipLayout.StoredData, Path>>) : SeedBytes, Closeable {
    private val entries = entries.sortedBy { it.first.offset }
    private val open = HashMap<Int, PositionalFile>()

    /** True when `offset until offset+count` of the old zip lies inside one stored entry's data (only such segments can be copied). */
    fun holds(offset: Long, count: Long): Boolean = entryHolding(offset, count) != null

    @Synchronized
    override fun read(count: Int, offset: Long): ByteArray {
        val number = entryHolding(offset, count.toLong()) ?: return ByteArray(0)
        val file = open.getOrPut(number) { PositionalFile.openForReading(entries[number].second) }
        return file.read(count, offset - entries[number].first.offset)
    }

    @Synchronized
    override fun close() {
        for (file in open.values) file.close()
        open.clear()
    }

    private fun entryHolding(offset: Long, count: Long): Int? {
        var low = 0
        var high = entries.size
        while (low < high) {
            val middle = (low + high) / 2
            if (entries[middle].first.offset <= offset) low = middle + 1 else high = middle
        }
        if (low == 0) return null
        val data = entries[low - 1].first
        return if (offset + count <= data.offset + data.size) low - 1 else null
    }
}
