package dev.modelcast.client

import dev.modelcast.client.format.ReleaseFile
import dev.modelcast.client.format.ReleaseModel
import dev.modelcast.client.format.SegmentIndex
import dev.modelcast.client.install.InstallSpace
import dev.modelcast.client.net.Cancellation
import dev.modelcast.client.net.DeltaDownload
import dev.modelcast.client.net.SegmentPlan
import java.nio.file.Path

/** The proven downloads of an update and the segment indexes fetched (kept with the install, to seed the next update), both by the file's SHA-256. */
internal class Fetched(val files: Map<String, Path>, val indexes: Map<String, ByteArray>)

/**
 * Downloads every file of [models] not already kept, after checking the free space. A file
 * with a segment index is built from the installed version's segments where it can be
 * (only the changed ones are fetched); any other is downloaded whole, resuming a partial
 * download. Reports progress (bytes of the update on disk) and sets [ModelUpdater.lastDownloads].
 */
internal fun ModelUpdater.download(models: List<ReleaseModel>, cancellation: Cancellation?): Fetched {
    val files = filesToFetch(models)
    var total = 0L
    var onDisk = 0L
    var zipped = 0L
    for ((file, model) in files) {
        total = addSizes(total, file.size)
        onDisk = addSizes(onDisk, downloader.bytesOnDisk(file.remote(model)))
        if (file.packedDirectoryName != null) zipped = addSizes(zipped, file.size)
    }
    // What is left to download, and a zip's unpacked copy (at least about its own size; its
    // exact size is checked before it is unpacked). A plain or tree file is installed as a
    // second link to its download: no second copy.
    checkFreeSpace(addSizes(total - onDisk, zipped))
    val proven = HashMap<String, Path>()
    val indexes = HashMap<String, ByteArray>()
    var done = onDisk
    val reports = ArrayList<FileDownload>()
    val delta = DeltaDownload(http, downloader.directory)
    try {
        for ((file, model) in files.sortedBy { it.first.sha256.text }) {
            val remote = file.remote(model)
            val before = downloader.bytesOnDisk(remote)
            val name = file.name.text
            // A file with a segment index: its index is kept with the install; the installed
            // version's copy of it (under this name or another) seeds the download.
            val index = provenIndex(delta, file, model, cancellation)
            if (index != null) indexes[file.sha256.text] = index.first
            val built = if (index != null && before == 0L) segmented(delta, file, model, index.second, cancellation) else null
            if (built != null) {
                proven[file.sha256.text] = built.first.path
                reports.add(FileDownload(model.name.text, name, file.size, built.first.fetchedBytes,
                    if (built.first.whole) null else built.second, if (built.first.whole) null else built.first.requests))
                report(UpdateProgress(name, done + file.size, total))
            } else {
                val start = done
                proven[file.sha256.text] = downloader.fetch(remote, cancellation) { written ->
                    report(UpdateProgress(name, start + written - before, total))
                }
                reports.add(FileDownload(model.name.text, name, file.size, file.size - before, null, null))
            }
            done += file.size - before
        }
    } finally {
        lastDownloads = reports
    }
    return Fetched(proven, indexes)
}

/**
 * The segment index of [file], fetched and proven (its bytes by the manifest's SHA-256 and
 * size, its value by the file's size and SHA-256), with its decoded index; null when the
 * manifest names none or the server cannot give it (the file is then downloaded whole).
 */
private fun ModelUpdater.provenIndex(delta: DeltaDownload, file: ReleaseFile, model: ReleaseModel, cancellation: Cancellation?): Pair<ByteArray, SegmentIndex>? {
    val reference = file.segments ?: return null
    val bytes = delta.indexBytesIfServed(reference.url.text, reference.size, reference.sha256.text, model.name.text, cancellation) ?: return null
    val index = try { SegmentIndex.decode(bytes) } catch (error: Exception) { return null }
    if (index.artifactSize != file.size || index.artifactSha256.hex != file.sha256.text) return null
    return Pair(bytes, index)
}

/** [file] built from the installed version's segments and range requests, with the version it was seeded from; null when it cannot be. */
private fun ModelUpdater.segmented(delta: DeltaDownload, file: ReleaseFile, model: ReleaseModel, index: SegmentIndex,
                                   cancellation: Cancellation?): Pair<DeltaDownload.Built, String>? {
    val layout = try { index.layout() } catch (error: ClientError) { return null }
    val seed = installer.seed(file, model, layout) ?: return null
    seed.use {
        val built = delta.build(file.remote(model), layout, SegmentPlan.of(layout, seed.have), seed.bytes, cancellation) ?: return null
        return Pair(built, seed.version)
    }
}

/**
 * Refuses a download that would leave less than [InstallSpace.RESERVED_SPACE] free. With
 * nothing to write (a rollback to a kept version) there is nothing to refuse: the reserve
 * guards what an update adds, not what a full volume already holds.
 */
private fun ModelUpdater.checkFreeSpace(needed: Long) {
    if (needed <= 0) return
    val free = InstallSpace.freeSpace(directory) ?: return
    val withReserve = InstallSpace.add(needed, InstallSpace.RESERVED_SPACE)
    if (withReserve > free) throw ClientError.InsufficientDiskSpace(withReserve, free)
}
