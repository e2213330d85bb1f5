package dev.modelcast.client

/** Progress of an update, as [ProgressListener.onProgress] reports it. */
data class UpdateProgress(
    /** The file being downloaded (its name in the manifest). */
    val file: String,
    /** Bytes of this update on disk so far (resumed bytes included). */
    val completedBytes: Long,
    /** Bytes of this update in all. */
    val totalBytes: Long
)

/**
 * Told the download progress of the update under way ([ModelUpdater.addProgressListener]).
 * It is called on the thread that runs the update, often (each chunk written): it must
 * return quickly, and post to the main thread itself when it updates a view.
 */
interface ProgressListener {
    fun onProgress(progress: UpdateProgress)
}
