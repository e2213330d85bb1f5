package dev.modelcast.client.format

/**
 * A model's `storage`: the bytes its files take unpacked ([installSize], 0…2^53; null when
 * the manifest does not say, and the client then counts its files' sizes) and its
 * [priority] when a storage budget makes room (0…100, default 50: the lowest goes first).
 */
data class ModelStorage(val installSize: Long? = null, val priority: Int = DEFAULT_PRIORITY) {
    init {
        require(installSize == null || installSize in 0..ByteSize.MAXIMUM) { "install_size $installSize is outside 0…2^53" }
        require(priority in 0..100) { "priority $priority is outside 0…100" }
    }

    companion object {
        /** A model's priority when the manifest gives none. */
        const val DEFAULT_PRIORITY = 50
    }
}
