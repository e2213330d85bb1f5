package dev.modelcast.client

import dev.modelcast.client.format.ReleaseModel
import dev.modelcast.client.install.InstallSize
import dev.modelcast.client.install.InstallSpace
import dev.modelcast.client.install.InstallVersion
import dev.modelcast.client.net.Cancellation
import dev.modelcast.client.trust.ModelSigningStatement
import java.nio.file.Files
import java.nio.file.Path

// The refusals an update makes before it installs: the install cap, the room on the
// volume, and (with a pinned key) each version's model signature.

/**
 * Refuses, before anything is fetched, a version whose plain files alone (their sizes are
 * the manifest's) take more than [ClientConfiguration.maxInstallBytes]. A zip's unpacked
 * size is known once it is downloaded ([checkRoom]).
 */
internal fun ModelUpdater.checkInstallCap(models: List<ReleaseModel>) {
    val cap = configuration.maxInstallBytes ?: return
    for (model in notKept(models)) {
        val plain = model.files.filter { it.packedDirectoryName == null }.fold(0L) { total, file -> InstallSpace.add(total, file.size) }
        if (plain > cap) throw ClientError.InstallTooLarge(model.name.text, model.version.text, plain, cap)
    }
}

/**
 * Before anything is unpacked: refuses a version that takes more than the cap installed, or
 * whose zips (at the sizes their entries declare) would leave less than
 * [InstallSpace.RESERVED_SPACE] free. The refused version's downloads are deleted, so nothing
 * of it stays on the volume.
 */
internal fun ModelUpdater.checkRoom(models: List<ReleaseModel>, downloads: Map<String, Path>) {
    val sizes = ArrayList<Pair<InstallVersion, InstallSize>>()
    for (model in notKept(models)) {
        val version = model.installVersion()
        sizes.add(Pair(version, installer.installSize(version, downloads)))
    }
    val free = if (sizes.any { it.second.added > 0 }) InstallSpace.freeSpace(directory) else null
    val (refused, problem) = InstallSpace.roomProblem(sizes, configuration.maxInstallBytes, free) ?: return
    for (file in refused.files) downloads[file.sha256]?.let { Files.deleteIfExists(it) }
    throw problem
}

/**
 * With a pinned model-signing key: the verified statement of each model version an update
 * is about to switch to, by model name, fetched before any of the models' files (a refusal
 * costs no model download). Without a key, none: no bundle is fetched.
 */
internal fun ModelUpdater.modelSignatureStatements(models: List<ReleaseModel>, cancellation: Cancellation?): Map<String, ModelSigningStatement> {
    val key = configuration.modelSigningPublicKey ?: return emptyMap()
    val signatures = ModelSignatures(key, http, configuration.retries)
    return models.associate { model -> model.name.text to signatures.statement(model, cancellation) }
}

/**
 * Before any download: per model, in order, the bytes it still has to download (each file
 * once, less what is on the disk already) and what its install adds ([installAddition]), as
 * running totals; with [InstallSpace.RESERVED_SPACE], the first past the volume's free space
 * is refused ([ClientError.InsufficientSpaceForDownload], naming it) and nothing is
 * requested. Nothing to write (a switch to a kept version), or a volume that cannot tell its
 * free space, asks nothing. The Swift client's sum (UpdateDownloads.pending).
 */
internal fun ModelUpdater.checkSpaceBeforeDownload(models: List<ReleaseModel>) {
    val seen = HashSet<String>()
    var needed = 0L
    val needs = ArrayList<Pair<ReleaseModel, Long>>()
    for (model in notKept(models)) {
        for (file in model.files) {
            if (seen.add(file.sha256.text)) needed = addSizes(needed, file.size - downloader.bytesOnDisk(file.remote(model)))
        }
        needed = addSizes(needed, installAddition(model))
        needs.add(Pair(model, needed))
    }
    if (needs.isEmpty() || needs.last().second <= 0) return
    val free = InstallSpace.freeSpace(directory) ?: return
    for ((model, bytes) in needs) {
        val withReserve = InstallSpace.add(bytes, InstallSpace.RESERVED_SPACE)
        if (withReserve > free) throw ClientError.InsufficientSpaceForDownload(model.name.text, withReserve, free)
    }
}

/**
 * The room [model]'s install takes beside its downloads. A plain or tree file is installed as
 * a second link to its download (no second copy); a zip is unpacked: the manifest's
 * `storage.install_size` less the plain files (publish computes it from the zip's entries,
 * and may only raise it), else at least about the zip's own size. Its exact unpacked size is
 * checked again before it is unpacked ([checkRoom]).
 */
internal fun installAddition(model: ReleaseModel): Long {
    var linked = 0L
    var zipped = 0L
    for (file in model.files) {
        if (file.packedDirectoryName == null) linked = InstallSpace.add(linked, file.size) else zipped = InstallSpace.add(zipped, file.size)
    }
    val storage = model.storage ?: return zipped
    return Math.max(0L, storage.installSize - linked)
}
