package dev.modelcast.client

import dev.modelcast.client.format.ReleaseFile
import dev.modelcast.client.format.ReleaseModel
import dev.modelcast.client.format.SegmentIndex
import dev.modelcast.client.install.Installer
import dev.modelcast.client.install.UnpackedZip
import dev.modelcast.client.install.keptIndex
import dev.modelcast.client.install.keptIndexNames
import dev.modelcast.client.install.keptVersions
import dev.modelcast.client.install.seedBytes
import dev.modelcast.client.net.Segment
import dev.modelcast.client.net.SegmentLayout
import dev.modelcast.client.net.SegmentPlan
import dev.modelcast.client.net.SeedBytes
import java.io.Closeable
import java.nio.file.Path

/**
 * What a segmented download copies from: the installed version's bytes ([bytes], [size] of
 * them), and where each segment they can give starts in them ([have]: a segment's SHA-256 →
 * its offset in the old artifact; each is proven again by hashing when copied). [version]
 * names the installed version (or versions, `2.0.0, 1.0.0`), for the report. Close it when
 * the build is done.
 */
internal class SegmentSeed(val bytes: SeedBytes, val version: String, val have: Map<String, Long>, val size: Long) : Closeable {
    override fun close() {
        (bytes as? Closeable)?.close()
    }
}

/** The format's decoded index as the segmented build's layout (plain values). */
internal fun SegmentIndex.layout(): SegmentLayout {
    val offsets = offsets
    val segments = ArrayList<Segment>(segmentCount)
    for (number in 0 until segmentCount) {
        val segment = segment(number)
        segments.add(Segment(offsets[number], segment.length, segment.sha256.hex))
    }
    return SegmentLayout(segments, artifactSize, artifactSha256.hex)
}

/**
 * What seeds the segmented download of [file] of [model] (whose proven index is [layout]):
 * every kept version (the one in use first, then those kept for a rollback) gives its best
 * seed, and a segment is copied from the first that has it, so an update that brings back
 * what an older kept version held fetches only what no kept version holds. Null when none
 * was kept, or for a tree model. Nothing read here is trusted: every copied segment is
 * hashed again.
 */
internal fun Installer.seed(file: ReleaseFile, model: ReleaseModel, layout: SegmentLayout): SegmentSeed? {
    if (model.tree != null) return null
    val seeds = ArrayList<SegmentSeed>()
    for (directory in keptVersions(model.name.text)) {
        val version = Installer.record(directory)?.version ?: continue
        bestSeed(file, directory, version, layout)?.let { seeds.add(it) }
    }
    return combinedSeed(seeds, layout)
}

/**
 * One seed from several kept versions' [seeds], the first preferred: a segment [layout] names
 * is copied from the first that has it. Seeds that give none are closed; null when none gives
 * one. A single seed is returned as it is.
 */
internal fun combinedSeed(seeds: List<SegmentSeed>, layout: SegmentLayout): SegmentSeed? {
    if (seeds.size <= 1) return seeds.firstOrNull()
    val needed = layout.segments.map { it.sha256 }.toHashSet()
    val have = HashMap<String, Long>()
    val parts = ArrayList<CombinedSeedBytes.Part>()
    val contributing = ArrayList<SegmentSeed>()
    var base = 0L
    for (seed in seeds) {
        var added = false
        for ((sha256, offset) in seed.have) {
            if (sha256 in needed && sha256 !in have) {
                have[sha256] = base + offset
                added = true
            }
        }
        if (added) {
            parts.add(CombinedSeedBytes.Part(base, seed.bytes, seed.size))
            contributing.add(seed)
        } else {
            seed.close()
        }
        base += seed.size
    }
    if (contributing.size <= 1) return contributing.firstOrNull()
    return SegmentSeed(CombinedSeedBytes(parts), contributing.joinToString(", ") { it.version }, have, base)
}

/** Several kept versions' bytes one after the other: the offsets of the second start where the first's artifact ends, and so on. */
internal class CombinedSeedBytes(private val parts: List<Part>) : SeedBytes, Closeable {
    class Part(val base: Long, val bytes: SeedBytes, val size: Long)

    override val path: String get() = parts.joinToString(", ") { it.bytes.path }

    override fun read(count: Int, offset: Long): ByteArray {
        val part = parts.lastOrNull { it.base <= offset } ?: return ByteArray(0)
        if (offset + count > part.base + part.size) return ByteArray(0)
        return part.bytes.read(count, offset - part.base)
    }

    override fun close() {
        for (part in parts) (part.bytes as? Closeable)?.close()
    }
}

/**
 * The seed the version at [directory] gives [file]: its file of the same name, else, whatever
 * their names (a file renamed between versions, `m-1.0.bin` → `m-1.1.bin`), its file of the
 * same kind (plain, or a zipped directory) with a kept index that leaves the least to fetch.
 */
private fun bestSeed(file: ReleaseFile, directory: Path, version: String, layout: SegmentLayout): SegmentSeed? {
    val zipped = file.packedDirectoryName != null
    seed(directory, file.name.text, zipped, version)?.let { return it }
    var best: Pair<SegmentSeed, Long>? = null
    for (other in keptIndexNames(directory)) {
        if (other == file.name.text) continue
        val seed = seed(directory, other, zipped, version) ?: continue
        val copied = SegmentPlan.of(layout, seed.have).copiedBytes
        if (best == null || copied > best.second) {
            best?.first?.close()
            best = Pair(seed, copied)
        } else {
            seed.close()
        }
    }
    if (best != null && best.second == 0L) {
        best.first.close()
        return null
    }
    return best?.first
}

/**
 * The seed the file [fileName] of the version directory [directory] gives, when its index
 * was kept and it is of the kind asked for: a plain file of the index's size, or a zipped
 * directory's unpacked stored entries (only the segments lying inside one entry's data).
 */
private fun seed(directory: Path, fileName: String, zipped: Boolean, version: String): SegmentSeed? {
    val bytes = keptIndex(directory, fileName) ?: return null
    val index = try { SegmentIndex.decode(bytes) } catch (error: Exception) { return null }
    val old = try { index.layout() } catch (error: ClientError) { return null }
    val all = SegmentPlan.offsets(old)
    val source = seedBytes(directory, fileName, zipped, index.artifactSize) ?: return null
    if (source !is UnpackedZip) return SegmentSeed(source, version, all, index.artifactSize)
    val lengths = HashMap<String, Long>()
    for (segment in old.segments) lengths.getOrPut(segment.sha256) { segment.length.toLong() }
    return SegmentSeed(source, version, all.filter { (sha256, offset) -> source.holds(offset, lengths[sha256] ?: 0L) }, index.artifactSize)
}
