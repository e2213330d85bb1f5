package dev.modelcast.client

import dev.modelcast.client.format.ReleaseFile
import dev.modelcast.client.format.ReleaseModel
import dev.modelcast.client.install.InstallFile
import dev.modelcast.client.install.InstallVersion
import dev.modelcast.client.install.Installer
import dev.modelcast.client.net.RemoteFile

// The checked release's values, handed to the transfer and install machinery (which takes
// plain values) in one place: nothing else of the orchestration converts them.

/**
 * For a zipped directory (`X.mlpackage.zip`, served as application/zip), the directory it
 * unpacks to (`X.mlpackage`); null for any other file. A directory model's name keeps its
 * extension, so a name with no `.` before `.zip` is a file.
 */
internal val ReleaseFile.packedDirectoryName: String?
    get() {
        if (path != null || !name.text.endsWith(".zip") || contentType != "application/zip") return null
        val folder = name.text.dropLast(4)
        return if (folder.contains('.')) folder else null
    }

/** The file as the downloader takes it. */
internal fun ReleaseFile.remote(model: ReleaseModel): RemoteFile = RemoteFile(url.text, sha256.text, size, model.name.text, name.text)

/** The version as the installer takes it; [indexes] (by SHA-256) are the proven segment indexes to keep with it. */
internal fun ReleaseModel.installVersion(indexes: Map<String, ByteArray> = emptyMap()): InstallVersion = InstallVersion(
    model = name.text, version = version.text, variant = variant?.text, tree = tree?.text,
    files = files.map { file ->
        InstallFile(file.name.text, file.sha256.text, file.size, file.path?.text, file.packedDirectoryName, indexes[file.sha256.text])
    })

/** Its version directory's name (`VERSION-<digest of its files>`), as the installer names it. */
internal val ReleaseModel.versionId: String get() = Installer.versionID(installVersion())
