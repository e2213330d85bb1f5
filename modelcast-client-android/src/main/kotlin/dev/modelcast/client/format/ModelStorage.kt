package dev.modelcast.client.format

/**
 * A model's (or a variant's) `storage`: the bytes its files take unpacked ([installSize],
 * 0…2^53, always stated: publish computes it, and a client without it would have to guess)
 * and its [priority] when a storage budget makes room (0…100, default 50: the lowest goes
 * first). A model without `storage` has none (null), and the client counts its files' sizes.
 */
data class ModelStorage(val installSize: Long, val priority: Int = DEFAULT_PRIORITY) {
    init {
        require(installSize in 0..ByteSize.MAXIMUM) { "install_size $installSize is outside 0…2^53" }
        require(priority in 0..100) { "priority $priority is outside 0…100" }
    }

    companion object {
        /** A model's priority when the manifest gives none. */
        const val DEFAULT_PRIORITY = 50
    }
}
