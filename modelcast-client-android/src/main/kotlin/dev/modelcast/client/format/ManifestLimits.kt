package dev.modelcast.client.format

/**
 * What every reader of a manifest accepts (the Swift client's `ManifestLimits`): publish
 * refuses to make live a manifest past either limit, since every reader would refuse it.
 */
object ManifestLimits {
    /** The largest manifest a device reads by default, in bytes (4 MiB): the fetcher refuses a bigger one unread. */
    const val MAX_BYTES: Int = 4 shl 20

    /**
     * The deepest nesting of arrays and objects, the document itself being level 1: a
     * deeper document is refused as it is read, before any recursion could exhaust the stack.
     */
    const val MAX_DEPTH: Int = 64
}
