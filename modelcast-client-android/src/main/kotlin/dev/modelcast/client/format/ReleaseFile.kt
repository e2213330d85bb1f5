package dev.modelcast.client.format

/**
 * One file of a model, every value parsed: what a device writes, where, and from which URL
 * is taken from these fields only. [size] is 0…2^53. For a tree model's file, [path] is its
 * place inside the tree directory; [segments] names its segment index when the publish
 * wrote one.
 */
data class ReleaseFile(
    val name: PathSegment,
    val key: RelativePath,
    val url: HttpUrl,
    val sha256: Sha256Hex,
    val size: Long,
    /** Printable ASCII, 1 to 255 characters. */
    val contentType: String,
    val path: RelativePath?,
    val segments: SegmentIndexRef?
) {
    init {
        require(size in 0..ByteSize.MAXIMUM) { "size $size is outside 0…2^53" }
    }

    /** Where the file goes inside the model's version directory: its tree path, or its name. */
    val placement: RelativePath get() = path ?: RelativePath(name)
}

/** Where a file's segment index is stored, and the bytes it must be ([size]: 48…[SegmentIndex.MAX_ENCODED_SIZE]). */
data class SegmentIndexRef(val key: RelativePath, val url: HttpUrl, val sha256: Sha256Hex, val size: Long) {
    init {
        require(size in 48..SegmentIndex.MAX_ENCODED_SIZE) { "a segment index of $size bytes" }
    }

    companion object {
        /** The Content-Type an index is served with. */
        const val CONTENT_TYPE: String = "application/octet-stream"
    }
}

/** Where a model's OpenSSF model signature (a Sigstore bundle) is stored ([size]: 1…[MAXIMUM_SIZE]). */
data class ModelSignatureRef(val key: RelativePath, val url: HttpUrl, val sha256: Sha256Hex, val size: Long) {
    init {
        require(size in 1..MAXIMUM_SIZE) { "a model signature of $size bytes" }
    }

    companion object {
        /** The largest bundle a device reads (32 MiB, the Swift client's `ModelSignatureBundle.maximumSize`). */
        const val MAXIMUM_SIZE: Long = 32L shl 20

        /** The Content-Type a bundle is served with. */
        const val CONTENT_TYPE: String = "application/json"
    }
}
