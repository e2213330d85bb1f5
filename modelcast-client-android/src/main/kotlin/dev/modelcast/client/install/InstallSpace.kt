package dev.modelcast.client.install

import dev.modelcast.client.ClientError
import java.io.File
import java.nio.file.Files
import java.nio.file.LinkOption
import java.nio.file.Path

/**
 * What installing a version takes of the disk, known before anything is unpacked. A zip's
 * entries count at the sizes they declare (unpacking holds each entry to its declared size,
 * so together they cannot take more); a plain file or a tree file counts at its size,
 * though it costs no new space: it is a second link to its download.
 *
 * @property installed bytes of the version's files once installed (what a cap limits).
 * @property added of those, the bytes that need new room on the volume: the unpacked zips.
 */
data class InstallSize(val installed: Long = 0, val added: Long = 0)

/** The disk rules of an install: the reserve kept free, the caps on a zip, and the sums that cannot overflow. */
object InstallSpace {
    /** Free space the client always leaves on the volume (room for its state and records, and for the app). */
    const val RESERVED_SPACE = 16L shl 20
    /** The most entries accepted from one zip. */
    const val MAX_ZIP_ENTRIES = 100_000
    /** The most bytes one zip may declare unpacked. */
    const val MAX_ZIP_BYTES = 64L shl 30

    /** Free bytes (usable by this process) on the volume holding `path` (or its nearest existing parent); null when the system cannot tell. */
    fun freeSpace(path: Path): Long? {
        var at: Path? = path.toAbsolutePath()
        while (at != null && !Files.exists(at, LinkOption.NOFOLLOW_LINKS)) at = at.parent
        if (at == null) return null
        // java.io.File: the one free-space call Android and the JDK both answer.
        val usable = File(at.toString()).usableSpace
        return if (usable > 0) usable else null
    }

    /**
     * The first of `versions` (about to be built, in order) that cannot be installed, and
     * why: more bytes installed than `cap` ([ClientError.InstallTooLarge]), or, with the ones
     * before it, more new bytes than `free` less [RESERVED_SPACE]
     * ([ClientError.InsufficientSpace]; null `free`: the system cannot tell). Null when all fit.
     */
    fun roomProblem(versions: List<Pair<InstallVersion, InstallSize>>, cap: Long?, free: Long?): Pair<InstallVersion, ClientError>? {
        var added = 0L
        for ((version, size) in versions) {
            if (cap != null && size.installed > cap) {
                return Pair(version, ClientError.InstallTooLarge(version.model, version.version, size.installed, cap))
            }
            added = add(added, size.added)
            if (free != null && size.added > 0 && added > free - RESERVED_SPACE) {
                return Pair(version, ClientError.InsufficientSpace(version.model, add(size.added, RESERVED_SPACE), Math.max(0L, free - (added - size.added))))
            }
        }
        return null
    }

    /** `a + b`, or `Long.MAX_VALUE` past it: a total that large is refused by any cap or volume. */
    fun add(a: Long, b: Long): Long {
        val sum = a + b
        return if (((a xor sum) and (b xor sum)) < 0) Long.MAX_VALUE else sum
    }
}
