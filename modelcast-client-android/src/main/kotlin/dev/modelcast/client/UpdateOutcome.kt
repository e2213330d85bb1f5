package dev.modelcast.client

/** What an update did. */
sealed class UpdateOutcome {
    /**
     * The server said the manifest had not changed (HTTP 304) since an update that covered
     * at least the models this one covers.
     */
    object NotModified : UpdateOutcome() {
        override fun toString() = "NotModified"
    }

    /**
     * The manifest was accepted; the models the update covers already were the ones it names,
     * but for those [waiting] ([UpdatePlan.waiting]).
     */
    data class UpToDate(val sequence: Long, val waiting: Map<String, WaitReason> = emptyMap()) : UpdateOutcome()

    /** The models whose installed version changed, name → version (a rollback included); [waiting] as in [UpdatePlan.waiting]. */
    data class Updated(val sequence: Long, val models: Map<String, String>, val waiting: Map<String, WaitReason> = emptyMap()) : UpdateOutcome()

    /**
     * [ClientConfiguration.shouldDownload] said not now, given this plan: nothing was
     * downloaded or changed (not even a switch to a kept version), nothing was saved, and
     * the next update asks again.
     */
    data class Deferred(val plan: UpdatePlan) : UpdateOutcome()
}

/** How one file of an update was downloaded ([ModelUpdater.lastDownloads]). */
data class FileDownload(
    val model: String,
    /** The file's name in the manifest. */
    val file: String,
    /** The file's size. */
    val size: Long,
    /** Bytes received for it in this update (a resumed download counts only the rest). */
    val fetchedBytes: Long,
    /** The kept versions whose files seeded a segmented download, the one in use first, joined by ", " (`2.0.0, 1.0.0`); null for a plain download. */
    val seededFrom: String?,
    /** The range requests of a segmented download (repairs included); null for a plain download. */
    val rangeRequests: Int?
)
