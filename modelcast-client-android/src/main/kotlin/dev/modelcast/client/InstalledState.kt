package dev.modelcast.client

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
    val models: List<Model>
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
