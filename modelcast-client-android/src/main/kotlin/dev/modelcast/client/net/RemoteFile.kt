package dev.modelcast.client.net

import dev.modelcast.client.ClientError

/**
 * One file to download, as plain values from a checked manifest: where it is, its SHA-256
 * (64 lowercase hex digits: it names the download on disk) and its size, and for messages
 * the model and the file's name in the manifest.
 */
data class RemoteFile(val url: String, val sha256: String, val size: Long, val model: String, val name: String) {
    init {
        if (!isSha256Hex(sha256)) throw ClientError.InvalidManifest(url, "sha256", sha256, "is not a SHA-256 digest (64 lowercase hexadecimal digits)")
        if (size < 0 || size > MAX_SIZE) throw ClientError.InvalidManifest(url, "size", size.toString(), "is not a size from 0 to 2^53")
    }

    companion object {
        /** The largest size a manifest gives (a JSON number every reader holds exactly). */
        const val MAX_SIZE = 1L shl 53
    }
}
