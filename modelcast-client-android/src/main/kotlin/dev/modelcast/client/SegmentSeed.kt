package dev.modelcast.client

import dev.modelcast.client.format.ReleaseFile
import dev.modelcast.client.format.ReleaseModel
import dev.modelcast.client.format.SegmentIndex
import dev.modelcast.client.install.Installer
import dev.modelcast.client.install.UnpackedZip
import dev.modelcast.client.install.keptIndex
import dev.modelcast.client.install.keptIndexNames
import dev.modelcast.client.install.seedBytes
import dev.modelcast.client.net.Segment
import dev.modelcast.client.net.SegmentLayout
import dev.modelcast.client.net.SegmentPlan
import dev.modelcast.client.net.SeedBytes
import java.io.Closeable

/**
 * What a segmented download copies from: the installed version's bytes ([bytes]), and where
 * each segment they can give starts in them ([have]: a segment's SHA-256 → its offset in the
 * old artifact; each is proven again by hashing when copied). [version] names the installed
 * version, for the report. Close it when the build is done.
 */
internal class SegmentSeed(val bytes: SeedBytes, val version: String, val have: Map<String, Long>) : Closeable {
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
 * the installed version's file of the same name, else, whatever their names (a file renamed
 * between versions, `m-1.0.bin` → `m-1.1.bin`), the installed version's file of the same kind
 * (plain, or a zipped directory) with a kept index that leaves the least to fetch. Null when
 * none was kept, or for a tree model. Nothing read here is trusted: every copied segment is
 * hashed again.
 */
internal fun Installer.seed(file: ReleaseFile, model: ReleaseModel, layout: SegmentLayout): SegmentSeed? {
    if (model.tree != null) return null
    val name = model.name.text
    val current = current(name) ?: return null
    val version = Installer.record(current)?.version ?: return null
    val zipped = file.packedDirectoryName != null
    seed(name, file.name.text, zipped, version)?.let { return it }
    var best: Pair<SegmentSeed, Long>? = null
    for (other in keptIndexNames(name)) {
        if (other == file.name.text) continue
        val seed = seed(name, other, zipped, version) ?: continue
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
 * The seed the file [fileName] of the version of [model] in use gives, when its index was
 * kept and it is of the kind asked for: a plain file of the index's size, or a zipped
 * directory's unpacked stored entries (only the segments lying inside one entry's data).
 */
private fun Installer.seed(model: String, fileName: String, zipped: Boolean, version: String): SegmentSeed? {
    val bytes = keptIndex(model, fileName) ?: return null
    val index = try { SegmentIndex.decode(bytes) } catch (error: Exception) { return null }
    val old = try { index.layout() } catch (error: ClientError) { return null }
    val all = SegmentPlan.offsets(old)
    val source = seedBytes(model, fileName, zipped, index.artifactSize) ?: return null
    if (source !is UnpackedZip) return SegmentSeed(source, version, all)
    val lengths = HashMap<String, Long>()
    for (segment in old.segments) lengths.getOrPut(segment.sha256) { segment.length.toLong() }
    return SegmentSeed(source, version, all.filter { (sha256, offset) -> source.holds(offset, lengths[sha256] ?: 0L) })
}
