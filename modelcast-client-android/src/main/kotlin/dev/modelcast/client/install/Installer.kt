package dev.modelcast.client.install

import dev.modelcast.client.ClientError
import dev.modelcast.client.net.Cancellation
import dev.modelcast.client.net.deleteTree
import dev.modelcast.client.net.deleteTreeQuietly
import dev.modelcast.client.net.hex
import dev.modelcast.client.net.ioReason
import dev.modelcast.client.net.regularFileSize
import dev.modelcast.client.net.sha256
import dev.modelcast.client.quoted
import java.io.IOException
import java.nio.ByteBuffer
import java.nio.channels.FileChannel
import java.nio.charset.StandardCharsets
import java.nio.file.Files
import java.nio.file.LinkOption
import java.nio.file.Path
import java.nio.file.Paths
import java.nio.file.StandardCopyOption
import java.nio.file.StandardOpenOption
import java.util.UUID
import java.util.concurrent.CancellationException

/**
 * Puts proven files in place and switches a model's `current` link with one rename, under
 * the client's directory only:
 *
 *     DIR/models/NAME/versions/VERSION-<id>/   one directory per installed version
 *     DIR/models/NAME/current                  a symbolic link to the version in use
 *
 * A version directory is built under a temporary name (`versions/.staging-<uuid>`) and
 * renamed into place whole, with a record of the artifacts it came from; `current` is
 * replaced by renaming a new link (`.current-<uuid>`) over it. A crash at any point leaves
 * `current` naming a complete version (or, before the first install, nothing). Every path
 * is built from checked names ([InstallVersion] refuses the rest), links are never followed
 * into, and nothing outside `DIR/models/` is written or deleted.
 *
 * @param directory the client's directory (`models/` is made under it).
 * @param maxInstallBytes the most a zip of one version may unpack to (besides the free space); null: no cap.
 */
class Installer(val directory: Path, val maxInstallBytes: Long? = null) {
    /** `DIR/models`. */
    val models: Path = directory.resolve("models")

    init {
        if (maxInstallBytes != null && maxInstallBytes <= 0) throw ClientError.Configuration("maxInstallBytes $maxInstallBytes must be positive")
    }

    fun modelDirectory(model: String): Path = models.resolve(checkedModel(model))
    fun versionsDirectory(model: String): Path = modelDirectory(model).resolve("versions")
    fun currentLink(model: String): Path = modelDirectory(model).resolve("current")

    /** The installed version of `version` when one with exactly these artifacts is kept (a rollback to it downloads nothing). */
    fun kept(version: InstallVersion): Path? {
        val path = versionsDirectory(version.model).resolve(versionID(version))
        val record = record(path) ?: return null
        return if (record.artifacts == version.files.map { it.sha256 }) path else null
    }

    /**
     * Builds the version directory from the proven downloads (`downloads`: SHA-256 → file)
     * and returns it. A kept directory with these artifacts is used as it is (relabelled with
     * the variant). `verify` is given the complete directory before it is used — the staged
     * one before its rename into place (a refusal removes it), or the kept one.
     * @throws ClientError [ClientError.UnsafeArchive] for a zip refused, [ClientError.InvalidManifest]
     *   for a name no path may be built from, [ClientError.Io] for the disk; `verify`'s errors.
     */
    fun build(version: InstallVersion, downloads: Map<String, Path>, manifestURL: String, sequence: Long,
              verify: ((Path) -> Unit)? = null, cancellation: Cancellation? = null): Path {
        version.check(manifestURL)
        kept(version)?.let { path ->
            verify?.invoke(path)
            label(path, version.variant)
            return path
        }
        val versions = versionsDirectory(version.model)
        realDirectories(versions)
        val staging = versions.resolve(".staging-${UUID.randomUUID()}")
        try {
            Files.createDirectories(staging)
            for (file in version.files) {
                cancellation?.throwIfCancelled()
                val source = downloads[file.sha256] ?: throw ClientError.Io(file.name, "not downloaded")
                val tree = version.tree
                val folder = file.packedDirectory
                if (tree != null && file.path != null) {
                    val destination = Names.appended(staging.resolve(tree), file.path)
                    Files.createDirectories(destination.parent)
                    place(source, destination)
                } else if (folder != null) {
                    val stored = ZipUnpacker(source, version.model, file.name).unpack(staging, folder, maxInstallBytes)
                    file.segmentIndex?.let { keepSeed(it, stored, file.name, staging) }
                } else {
                    place(source, staging.resolve(file.name))
                    file.segmentIndex?.let { keepSeed(it, null, file.name, staging) }
                }
            }
            val record = VersionRecord(version.model, version.version, mainFile(version), version.files.map { it.sha256 }, manifestURL, sequence, version.variant)
            writeSynced(staging.resolve(RECORD_NAME), record.toJson())
            verify?.invoke(staging)
            val final = versions.resolve(versionID(version))
            deleteTree(final) // an incomplete one (no record, or other artifacts): it is rebuilt
            Files.move(staging, final, StandardCopyOption.ATOMIC_MOVE)
            return final
        } catch (error: Throwable) {
            deleteTreeQuietly(staging)
            when (error) {
                is ClientError, is CancellationException -> throw error
                is IOException -> throw ClientError.Io(staging.toString(), ioReason(error))
                else -> throw error
            }
        }
    }

    /**
     * Makes the record of the version directory `version` name `variant`: two variants with
     * the same files share a directory, and the record says what is installed now.
     */
    fun label(version: Path, variant: String?) {
        val record = record(version) ?: return
        if (record.variant == variant) return
        val path = version.resolve(RECORD_NAME)
        try {
            writeAtomically(path, record.copy(variant = variant).toJson())
        } catch (error: IOException) {
            throw ClientError.Io(path.toString(), ioReason(error))
        }
    }

    /**
     * Points `current` at `version` (a directory of `versions/`) with one rename: a new link
     * `.current-<uuid>` renamed over the old one. Readers see the old version or the new one,
     * never neither.
     */
    fun activate(model: String, version: Path) {
        val versions = versionsDirectory(model)
        val id = version.fileName?.toString() ?: ""
        if (version.parent?.normalize() != versions.normalize() || Names.segmentProblem(id) != null || id.startsWith(".")) {
            throw ClientError.Configuration("${quoted(version.toString())} is not a version directory of model ${quoted(model)}")
        }
        val link = currentLink(model)
        val temporary = modelDirectory(model).resolve(".current-${UUID.randomUUID()}")
        try {
            realDirectories(modelDirectory(model))
            Files.createSymbolicLink(temporary, Paths.get("versions", id))
            Files.move(temporary, link, StandardCopyOption.ATOMIC_MOVE)
        } catch (error: IOException) {
            deleteTreeQuietly(temporary)
            throw ClientError.Io(link.toString(), ioReason(error))
        }
    }

    /**
     * Switches `model` to `version` ([activate]) and returns `state` recording it: the
     * version directory that was current goes first in the model's previous ones, at most
     * `keepPreviousVersions` of which are kept (the rest are for [pruneTo] to delete once the
     * state is saved). Save the returned state; if that fails, [activate] the old one back.
     */
    fun switchTo(model: String, version: Path, state: ClientState, keepPreviousVersions: Int): ClientState {
        val previous = current(model)?.fileName?.toString()
        activate(model, version)
        val id = version.fileName.toString()
        val history = (listOfNotNull(previous) + (state.installed[model]?.previous ?: emptyList())).filter { it != id }.distinct()
        val record = record(version)
        val installed = ClientState.Installed(record?.version ?: id, id, history.take(Math.max(0, keepPreviousVersions)))
        return state.copy(installed = state.installed + (model to installed))
    }

    /** Deletes the versions of `model` that `state` neither uses nor keeps for a rollback (and leftovers of interrupted installs). */
    fun pruneTo(model: String, state: ClientState) {
        val installed = state.installed[model] ?: return
        prune(model, (listOf(installed.id) + installed.previous).toSet())
    }

    /** The version `current` names, if it is a complete one (it has its record). */
    fun current(model: String): Path? {
        if (Names.modelNameProblem(model) != null) return null
        val target = try { Files.readSymbolicLink(currentLink(model)).toString() } catch (error: IOException) { return null } catch (error: UnsupportedOperationException) { return null }
        if (!target.startsWith("versions/")) return null
        val id = target.substring("versions/".length)
        if (Names.segmentProblem(id) != null) return null
        val path = versionsDirectory(model).resolve(id)
        return if (record(path) != null) path else null
    }

    /** The model `model` as installed, read from the disk alone; null when none is. */
    fun installed(model: String): InstalledModel? {
        val version = current(model) ?: return null
        val record = record(version) ?: return null
        if (record.name != model || Names.relativePathProblem(record.mainFile) != null) return null
        return InstalledModel(model, record.version, record.variant, version, Names.appended(currentLink(model), record.mainFile))
    }

    /** What is installed, read from the disk alone: every model directory whose `current` names a complete version, by name. */
    fun installedModels(): List<InstalledModel> = listNames(models).filter { Names.modelNameProblem(it) == null }.sorted().mapNotNull { installed(it) }

    /** The version directories of `model` with a complete record, newest change first. */
    fun versions(model: String): List<String> {
        val versions = versionsDirectory(model)
        return listNames(versions).filter { !it.startsWith(".") && record(versions.resolve(it)) != null }
            .map { Pair(it, modified(versions.resolve(it))) }
            .sortedWith(compareByDescending<Pair<String, Long>> { it.second }.thenBy { it.first })
            .map { it.first }
    }

    /**
     * Deletes versions of `model` other than `keep` (directory names), and leftovers of
     * interrupted installs and switches: only what this client created under `models/NAME/`.
     */
    fun prune(model: String, keep: Set<String>) {
        val modelDirectory = modelDirectory(model)
        val versions = versionsDirectory(model)
        if (!isRealDirectory(modelDirectory)) return
        if (isRealDirectory(versions)) {
            for (entry in listNames(versions)) if (entry !in keep) deleteTreeQuietly(versions.resolve(entry))
        }
        for (entry in listNames(modelDirectory)) if (entry.startsWith(".current-")) deleteTreeQuietly(modelDirectory.resolve(entry))
    }

    /**
     * Deletes a model no manifest names any more: its `current` link, its versions, and its
     * directory once empty. Only a directory holding what this client creates is touched.
     */
    fun remove(model: String) {
        val modelDirectory = modelDirectory(model)
        if (!isRealDirectory(modelDirectory)) return
        val entries = listNames(modelDirectory)
        if (!entries.all { it == "current" || it == "versions" || it.startsWith(".current-") }) return
        deleteTreeQuietly(currentLink(model))
        prune(model, emptySet())
        deleteTreeQuietly(versionsDirectory(model))
        try { Files.deleteIfExists(modelDirectory) } catch (error: IOException) {}
    }

    /**
     * The install size of `version` from its proven downloads (SHA-256 → file): plain files
     * at their size, zips at the sizes their entries declare (read from the entry list, not the data).
     */
    fun installSize(version: InstallVersion, downloads: Map<String, Path>): InstallSize {
        var installed = 0L
        var added = 0L
        for (file in version.files) {
            val zip = downloads[file.sha256]
            if (file.packedDirectory != null && zip != null) {
                val unpacked = unpackedSize(zip, version.model, file.name)
                installed = InstallSpace.add(installed, unpacked)
                added = InstallSpace.add(added, unpacked)
            } else {
                installed = InstallSpace.add(installed, file.size)
            }
        }
        return InstallSize(installed, added)
    }

    /** The sum of the sizes the entries of `zip` declare, refused past [InstallSpace.MAX_ZIP_ENTRIES] entries or [InstallSpace.MAX_ZIP_BYTES] bytes. */
    fun unpackedSize(zip: Path, model: String, file: String): Long {
        val unpacker = ZipUnpacker(zip, model, file)
        val listing = unpacker.listing()
        if (listing.entries.size > InstallSpace.MAX_ZIP_ENTRIES) throw ClientError.UnsafeArchive(model, file, "more than ${InstallSpace.MAX_ZIP_ENTRIES} entries")
        var total = 0L
        for (entry in listing.entries) {
            if (entry.isDirectory) continue
            total = InstallSpace.add(total, entry.size)
            if (total > InstallSpace.MAX_ZIP_BYTES) throw ClientError.UnsafeArchive(model, file, "its entries declare more than ${InstallSpace.MAX_ZIP_BYTES} bytes unpacked")
        }
        return total
    }

    /**
     * `state` brought in line with the disk: a model whose `current` is not the version the
     * state says (a crash between the switch and the state's write, a lost state) gets its
     * entry from the disk, the versions kept beside it as its previous ones, and its record's
     * sequence if higher; the manifest's ETag is dropped (the next check fetches it whole).
     * A record's sequence counts as at most [floorCap] (null: no bound): under a key set, a
     * record may hold the 2^53 a leaked, since revoked manifest key signed, which must not
     * raise the floor the rotation reset (the caller passes the newest trusted key set's
     * floor for the channel, `sequence_floors`).
     */
    @JvmOverloads
    fun repair(state: ClientState, manifestURL: String, keepPreviousVersions: Int, floorCap: Long? = null): ClientState {
        var repaired = state
        for (model in installedModels()) {
            val id = model.directory.fileName.toString()
            if (repaired.installed[model.name]?.id == id) continue
            val others = versions(model.name).filter { it != id }.take(Math.max(0, keepPreviousVersions))
            val sequences = HashMap(repaired.sequences)
            val record = record(model.directory)
            if (record != null && record.manifestURL == manifestURL) {
                val sequence = if (floorCap != null) Math.min(record.sequence, floorCap) else record.sequence
                if (sequence > (sequences[manifestURL] ?: -1L)) sequences[manifestURL] = sequence
            }
            repaired = repaired.copy(
                installed = repaired.installed + (model.name to ClientState.Installed(model.version, id, others)),
                sequences = sequences,
                etags = repaired.etags - manifestURL
            )
        }
        return repaired
    }

    /** Refuses (as a configuration mistake) a model name no path may be built from. */
    private fun checkedModel(model: String): String {
        Names.modelNameProblem(model)?.let { throw ClientError.Configuration("model ${quoted(model)} $it") }
        return model
    }

    /** Refuses to work through a link where the client made a directory (one planted there could lead outside). */
    private fun realDirectories(path: Path) {
        var at: Path? = path
        while (at != null && at != directory && at.startsWith(directory)) {
            if (Files.isSymbolicLink(at)) throw ClientError.Io(at.toString(), "is a symbolic link where the client keeps a directory")
            at = at.parent
        }
    }

    companion object {
        /** The record beside a version's files. */
        const val RECORD_NAME = ".modelcast-version.json"
        /** Where a version keeps what seeds the next version's segmented download. */
        const val SEGMENTS_FOLDER = ".modelcast-segments"
        /** The largest record read. */
        private const val MAX_RECORD_BYTES = 1L shl 20

        /**
         * The directory name a version gets: its version and a digest of the artifacts it
         * came from (SHA-256 of "sha256 placement" lines), so the same version with the same
         * bytes is recognised after a rollback. The same name the Swift client gives.
         */
        fun versionID(version: InstallVersion): String {
            val lines = version.files.joinToString("\n") { it.sha256 + " " + it.placement }
            return version.version + "-" + hex(sha256().digest(lines.toByteArray(StandardCharsets.UTF_8)).copyOf(6))
        }

        /** The model itself inside its version directory: the tree's directory, a zipped directory's folder, or the first file. */
        fun mainFile(version: InstallVersion): String {
            version.tree?.let { return it }
            val first = version.files[0]
            return first.packedDirectory ?: first.name
        }

        /** The record of the version directory `version`, if it is a complete one. */
        fun record(version: Path): VersionRecord? {
            val path = version.resolve(RECORD_NAME)
            val size = regularFileSize(path) ?: return null
            if (size > MAX_RECORD_BYTES) return null
            return try {
                VersionRecord.parse(String(Files.readAllBytes(path), StandardCharsets.UTF_8))
            } catch (error: IOException) {
                null
            }
        }

        /**
         * Puts the proven download `source` at `destination`: a second link to the same
         * bytes (instant, no second copy on the disk), or a copy where the file system
         * cannot link. Downloads are never written again once complete.
         */
        internal fun place(source: Path, destination: Path) {
            if (regularFileSize(source) == null) throw ClientError.Io(source.toString(), "is not a downloaded file")
            try {
                Files.createLink(destination, source)
            } catch (error: Exception) {
                if (error !is IOException && error !is UnsupportedOperationException && error !is SecurityException) throw error
                Files.copy(source, destination)
            }
        }

        internal fun isRealDirectory(path: Path): Boolean = Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)

        internal fun listNames(directory: Path): List<String> = try {
            if (!isRealDirectory(directory)) emptyList()
            else Files.newDirectoryStream(directory).use { stream -> stream.map { it.fileName.toString() } }
        } catch (error: IOException) {
            emptyList()
        }

        private fun modified(path: Path): Long = try {
            Files.getLastModifiedTime(path, LinkOption.NOFOLLOW_LINKS).toMillis()
        } catch (error: IOException) {
            0L
        }

        /** Writes `text` to a new file, synced (the staged version's record: the directory is renamed whole later). */
        internal fun writeSynced(path: Path, text: String) {
            FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS).use { channel ->
                val bytes = ByteBuffer.wrap(text.toByteArray(StandardCharsets.UTF_8))
                while (bytes.hasRemaining()) channel.write(bytes)
                channel.force(true)
            }
        }

        /** Replaces `path` with `text`: a synced temporary file renamed over it. */
        internal fun writeAtomically(path: Path, text: String) {
            val temporary = path.resolveSibling(".${path.fileName}.tmp-${UUID.randomUUID()}")
            try {
                writeSynced(temporary, text)
                Files.move(temporary, path, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE)
            } catch (error: IOException) {
                deleteTreeQuietly(temporary)
                throw error
            }
        }
    }
}
