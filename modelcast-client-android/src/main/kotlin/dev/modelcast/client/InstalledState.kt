package dev.modelcast.client

import dev.modelcast.client.format.LicenceTerms
import dev.modelcast.client.install.Installer
import dev.modelcast.client.net.ioReason
import dev.modelcast.client.net.sha256Hex
import java.io.IOException
import java.nio.file.Files
import java.nio.file.LinkOption
import java.nio.file.Path
import java.nio.file.attribute.BasicFileAttributes

/**
 * What a client's directory holds, as an outside judge (the conformance kit's `state` call,
 * a support screen, a test) needs to see it: the highest sequence trusted, and per installed
 * model its version, variant, files with their digests as they are on the disk now, the
 * versions kept for a local revert and the version refused on this device. Read by
 * [ModelUpdater.installedState]; it holds no handle and changes nothing.
 */
data class InstalledState(
    /** The highest manifest sequence this device accepted from [ClientConfiguration.manifestUrl]; null before the first. */
    val sequence: Long?,
    /** The installed models, sorted by name. */
    val models: List<Model>,
    /** The licence terms the user accepted, per model ([ModelUpdater.acceptLicence]). */
    val licences: Map<String, LicenceTerms> = emptyMap()
) {
    /** One file of an installed version. */
    data class File(
        /**
         * Relative to [ClientConfiguration.directory], `/`-separated, through the version's
         * own directory (`models/NAME/versions/ID/FILE`), never through `current`, so the path
         * names the bytes it was hashed from. No `..`, never absolute.
         */
        val path: String,
        /** The SHA-256 of the file's bytes as read when the state was taken, lowercase hex. */
        val sha256: String
    )

    /** One installed model. */
    data class Model(
        val name: String,
        /** The version `current` names. */
        val version: String,
        /** Its variant, null for a model without variants. */
        val variant: String?,
        /**
         * Every regular file of the version in use, sorted by path; the client's own records
         * beside them (`.modelcast-version.json`, `.modelcast-segments/`) are left out.
         */
        val files: List<File>,
        /** The versions kept for [ModelUpdater.reportUnusable] to go back to, newest first. */
        val previous: List<String>,
        /** The version [ModelUpdater.reportUnusable] refused on this device, until a manifest names another one; null when none is. */
        val refused: String?
    )
}

/**
 * The state of the updater's directory, from the disk and `state.json` alone. Every installed
 * file is read and hashed, so the digests prove what is on the disk now, not what was once
 * downloaded. It waits for no update; called during one, it sees the models before or after
 * that update's switch, never half of it.
 */
internal fun ModelUpdater.readInstalledState(): InstalledState {
    val state = loadState()
    val models = ArrayList<InstalledState.Model>()
    for (model in installer.installedModels()) {
        val id = model.directory.fileName.toString()
        val versions = installer.versionsDirectory(model.name)
        val kept = (state.installed[model.name]?.previous ?: emptyList()).filter { it != id }
            .mapNotNull { previous -> if (PathSegmentText.isSafe(previous)) Installer.record(versions.resolve(previous))?.version else null }
        val base = "models/${model.name}/versions/$id"
        val files = installedFiles(model.directory, base, top = true).sortedBy { it.path }
        models.add(InstalledState.Model(model.name, model.version, model.variant, files, kept, state.refused[model.name]?.version))
    }
    return InstalledState(state.sequences[configuration.manifestUrl], models, licences.accepted())
}

/**
 * The regular files under [version] (whose path relative to the client's directory is
 * [base]), hashed; the client's own records at the top are left out. Symbolic links are not
 * followed: the installer makes none, and one planted there must not lead the walk outside
 * the directory.
 */
private fun installedFiles(version: Path, base: String, top: Boolean): List<InstalledState.File> {
    val entries = try {
        Files.newDirectoryStream(version).use { stream -> stream.map { it.fileName.toString() } }
    } catch (error: IOException) {
        throw ClientError.Io(version.toString(), ioReason(error))
    }
    val files = ArrayList<InstalledState.File>()
    for (entry in entries.sorted()) {
        if (top && (entry == Installer.RECORD_NAME || entry == Installer.SEGMENTS_FOLDER)) continue
        val path = version.resolve(entry)
        val attributes = try {
            Files.readAttributes(path, BasicFileAttributes::class.java, LinkOption.NOFOLLOW_LINKS)
        } catch (error: IOException) {
            continue
        }
        when {
            attributes.isDirectory -> files.addAll(installedFiles(path, "$base/$entry", top = false))
            attributes.isRegularFile -> files.add(InstalledState.File("$base/$entry", sha256Hex(path)))
        }
    }
    return files
}

/** A version directory's name from `state.json` is only looked up when it is one path segment (no `/`, not `.` or `..`). */
private object PathSegmentText {
    fun isSafe(text: String): Boolean = text.isNotEmpty() && text != "." && text != ".." && !text.contains('/') && !text.contains('\u0000')
}
