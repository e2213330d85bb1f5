package dev.modelcast.client.install

import dev.modelcast.client.ClientError
import dev.modelcast.client.net.isSha256Hex
import java.nio.file.Path

/**
 * One file of a version to install, as plain values from a checked manifest.
 *
 * @property name the file's name in the manifest (one path segment).
 * @property sha256 its SHA-256 (64 lowercase hex digits): which proven download it is.
 * @property path for a tree model, where it goes inside the tree's directory (a relative path).
 * @property packedDirectory for a zipped directory (`NAME.EXT.zip`, unpacked on install), `NAME.EXT`.
 * @property segmentIndex the proven bytes of its segment index, kept with the version to seed the next one's segmented download.
 */
class InstallFile(
    val name: String,
    val sha256: String,
    val size: Long,
    val path: String? = null,
    val packedDirectory: String? = null,
    val segmentIndex: ByteArray? = null
) {
    /** Where the file goes inside the version directory (inside the tree's directory for a tree model): its path, or its name. */
    val placement: String get() = path ?: name

    override fun toString(): String = "$name ($sha256, $size bytes)"
}

/**
 * A model version to install: its name, version, variant, a tree model's directory, and
 * its files (the first is the model itself, unless it is a tree model).
 */
class InstallVersion(
    val model: String,
    val version: String,
    val files: List<InstallFile>,
    val variant: String? = null,
    val tree: String? = null
) {
    /** Refuses, naming the field and the value, anything a path would be built from that is not safe to build one from. */
    internal fun check(manifestURL: String) {
        fun refuse(field: String, value: String, problem: String?) {
            if (problem != null) throw ClientError.InvalidManifest(manifestURL, field, value, problem)
        }
        refuse("model", model, Names.modelNameProblem(model))
        refuse("version", version, Names.versionProblem(version))
        variant?.let { refuse("variant", it, Names.modelNameProblem(it)) }
        tree?.let { refuse("tree", it, Names.segmentProblem(it)) }
        if (files.isEmpty()) throw ClientError.InvalidManifest(manifestURL, "files", null, "of model ${dev.modelcast.client.quoted(model)} are empty")
        val places = HashSet<String>()
        for (file in files) {
            refuse("file name", file.name, Names.segmentProblem(file.name))
            refuse("sha256", file.sha256, if (isSha256Hex(file.sha256)) null else "is not a SHA-256 digest (64 lowercase hexadecimal digits)")
            if (file.size < 0) throw ClientError.InvalidManifest(manifestURL, "size", file.size.toString(), "is negative")
            file.path?.let { refuse("file path", it, if (tree == null) "is given for a model that is not a tree" else Names.relativePathProblem(it)) }
            if (tree != null && file.path == null) throw ClientError.InvalidManifest(manifestURL, "file path", null, "is missing for ${dev.modelcast.client.quoted(file.name)} of a tree model")
            file.packedDirectory?.let { folder ->
                refuse("packed directory", folder, Names.segmentProblem(folder) ?: when {
                    file.path != null -> "is given for a tree model's file"
                    file.name != "$folder.zip" -> "is not the name of ${dev.modelcast.client.quoted(file.name)} without '.zip'"
                    !folder.contains('.') -> "has no extension (NAME.EXT)"
                    else -> null
                })
            }
            // Lowercased: two places that differ only by case are one file on some file systems.
            val place = Names.foldCase(file.packedDirectory ?: file.placement)
            refuse("file", file.placement, if (places.add(place)) null else "goes to the same place as another file of the model")
        }
    }

    override fun toString(): String = "$model $version"
}

/**
 * A model version installed on the device.
 *
 * @property directory the version's directory (`models/NAME/versions/VERSION-…`).
 * @property mainFile the model itself through the `current` link (`models/NAME/current/<file>`):
 *   the path stays the same across updates, so an app may keep it.
 */
data class InstalledModel(val name: String, val version: String, val variant: String?, val directory: Path, val mainFile: Path)

/**
 * What the client writes beside a version's files (`.modelcast-version.json`): where the
 * version came from. Reading installed models needs no network and survives a lost `state.json`.
 *
 * @property mainFile the model itself, relative to the version directory.
 * @property artifacts the artifacts' SHA-256, in the manifest's order.
 */
data class VersionRecord(
    val name: String,
    val version: String,
    val mainFile: String,
    val artifacts: List<String>,
    val manifestURL: String,
    val sequence: Long,
    val variant: String? = null
) {
    internal fun toJson(): String {
        val fields = linkedMapOf<String, Any?>("name" to name, "version" to version, "mainFile" to mainFile, "artifacts" to artifacts,
            "manifestURL" to manifestURL, "sequence" to sequence)
        if (variant != null) fields["variant"] = variant
        return Json.write(fields)
    }

    internal companion object {
        fun parse(text: String): VersionRecord? {
            val root = try { JsonObject.asObject(Json.parse(text), "record") } catch (error: JsonError) { null } ?: return null
            return try {
                VersionRecord(root.string("name") ?: return null, root.string("version") ?: return null, root.string("mainFile") ?: return null,
                    root.stringList("artifacts") ?: return null, root.string("manifestURL") ?: return null, root.long("sequence") ?: return null,
                    root.string("variant"))
            } catch (error: JsonError) {
                null
            }
        }
    }
}
