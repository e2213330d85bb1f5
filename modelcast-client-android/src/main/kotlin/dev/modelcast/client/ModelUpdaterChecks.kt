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
 * Before any download: the volume must hold, for the models about to download, the bytes
 * still to download, their install size (the manifest's `storage.install_size`, else their
 * files' sizes) and [InstallSpace.RESERVED_SPACE]; else [ClientError.InsufficientSpaceForDownload]
 * names the first model past it, and nothing is requested. Nothing to download (a switch to
 * a kept version), or a volume that cannot tell its free space, asks nothing.
 */
internal fun ModelUpdater.checkSpaceBeforeDownload(models: List<ReleaseModel>) {
    val downloads = notKept(models).map { Pair(it, modelBytesToDownload(it)) }
    if (downloads.all { it.second <= 0 }) return
    val free = InstallSpace.freeSpace(directory) ?: return
    var needed = InstallSpace.RESERVED_SPACE
    for ((model, bytes) in downloads) {
        needed = InstallSpace.add(needed, InstallSpace.add(Math.max(0L, bytes), model.installBytes()))
        if (needed > free) throw ClientError.InsufficientSpaceForDownload(model.name.text, needed, free)
    }
}
