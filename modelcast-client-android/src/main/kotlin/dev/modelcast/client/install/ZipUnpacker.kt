package dev.modelcast.client.install

import dev.modelcast.client.ClientError
import dev.modelcast.client.net.clearForAnyJava
import dev.modelcast.client.net.ioReason
import dev.modelcast.client.net.limitForAnyJava
import dev.modelcast.client.quoted
import java.io.IOException
import java.io.InputStream
import java.nio.ByteBuffer
import java.nio.channels.FileChannel
import java.nio.file.FileAlreadyExistsException
import java.nio.file.Files
import java.nio.file.LinkOption
import java.nio.file.Path
import java.nio.file.StandardOpenOption
import java.util.zip.CRC32
import java.util.zip.ZipFile

/**
 * Unpacks a zipped directory (`NAME.EXT.zip`) the way the Swift client does, refusing
 * before a byte is written: a layout whose bytes the entry list does not show
 * ([ZipLayout]), an entry outside `NAME.EXT/`, with a `..`, `.` or empty segment or any
 * name a [Names.relativePathProblem] refuses, a symbolic link or special file, an encrypted
 * entry or another method than stored or deflated, more than [InstallSpace.MAX_ZIP_ENTRIES]
 * entries, and declared sizes adding up to more than the budget (the cap, [InstallSpace.MAX_ZIP_BYTES],
 * and the free space less [InstallSpace.RESERVED_SPACE]). While unpacking, each entry is
 * inflated no further than its declared size (a read asks for at most one byte past it)
 * and must end exactly there, with its CRC-32.
 *
 * Inflating is `java.util.zip.ZipFile`'s; which entries there are and what they are is this
 * class's own reading of the central directory (`ZipEntry` hides the Unix mode that marks a link).
 */
internal class ZipUnpacker(private val zip: Path, private val model: String, private val file: String) {
    private fun unsafe(reason: String) = ClientError.UnsafeArchive(model, file, reason)

    /** The checked listing of the zip (its layout and entries), before anything is unpacked. */
    fun listing(): ZipLayout.Listing {
        val channel = try {
            FileChannel.open(zip, StandardOpenOption.READ)
        } catch (error: IOException) {
            throw unsafe("not a readable zip (${ioReason(error)})")
        }
        channel.use {
            try {
                val size = it.size()
                return ZipLayout.check(size, object : ZipLayout.Reader {
                    override fun read(offset: Long, count: Int): ByteArray {
                        val buffer = ByteBuffer.allocate(count)
                        var at = offset
                        while (buffer.hasRemaining()) {
                            val read = it.read(buffer, at)
                            if (read < 0) break
                            at += read
                        }
                        return if (buffer.position() == count) buffer.array() else buffer.array().copyOf(buffer.position())
                    }
                })
            } catch (problem: ZipLayout.Problem) {
                throw unsafe(problem.description)
            } catch (error: IOException) {
                throw unsafe("not a readable zip (${ioReason(error)})")
            }
        }
    }

    /** The entries of `listing`, each checked, with the relative path each unpacks to (directories end in '/'). */
    fun checkedEntries(listing: ZipLayout.Listing, root: String): List<Pair<ZipLayout.Entry, String>> {
        if (listing.entries.size > InstallSpace.MAX_ZIP_ENTRIES) throw unsafe("more than ${InstallSpace.MAX_ZIP_ENTRIES} entries")
        val seen = HashMap<String, Boolean>()
        return listing.entries.map { entry ->
            val name = entry.name
            if (name != "$root/" && !name.startsWith("$root/")) throw unsafe("entry ${entry.label} is outside $root/")
            if (entry.isSymbolicLink) throw unsafe("entry ${entry.label} is a symbolic link")
            if (entry.isSpecial) throw unsafe("entry ${entry.label} is not a regular file or directory")
            if (entry.flags and 0x0001 != 0) throw unsafe("entry ${entry.label} is encrypted")
            if (!entry.isDirectory && entry.method != 0 && entry.method != 8) {
                throw unsafe("entry ${entry.label} is compressed with method ${entry.method}, not stored or deflated")
            }
            val trimmed = if (name.endsWith("/")) name.substring(0, name.length - 1) else name
            Names.relativePathProblem(trimmed)?.let { throw unsafe("entry ${entry.label} could leave the model's directory: it $it") }
            val directory = entry.isDirectory
            val before = seen.put(trimmed, directory)
            if (before != null && !(before && directory)) throw unsafe("entry ${quoted(trimmed)} appears twice")
            if (!directory && entry.size > InstallSpace.MAX_ZIP_BYTES) {
                throw unsafe("entry ${entry.label} declares ${entry.size} bytes unpacked, more than ${InstallSpace.MAX_ZIP_BYTES}")
            }
            Pair(entry, trimmed)
        }
    }

    /** The sum of the sizes the file entries declare (at most [InstallSpace.MAX_ZIP_BYTES], else refused). */
    fun declaredSize(entries: List<Pair<ZipLayout.Entry, String>>): Long {
        var total = 0L
        for ((entry, _) in entries) {
            if (entry.isDirectory) continue
            total = InstallSpace.add(total, entry.size)
            if (total > InstallSpace.MAX_ZIP_BYTES) throw unsafe("its entries declare more than ${InstallSpace.MAX_ZIP_BYTES} bytes unpacked")
        }
        return total
    }

    /**
     * Unpacks into `destination` (an empty directory of the version being built), every
     * entry under `root/`; `cap` limits the unpacked bytes besides the free space.
     * Returns where the zip's stored entries lie in it (for a later segmented download).
     */
    fun unpack(destination: Path, root: String, cap: Long?): List<ZipLayout.StoredData> {
        val listing = listing()
        val entries = checkedEntries(listing, root)
        val spare = InstallSpace.freeSpace(destination.parent ?: destination)?.let { Math.max(0L, it - InstallSpace.RESERVED_SPACE) }
        var budget = InstallSpace.MAX_ZIP_BYTES
        if (cap != null) budget = Math.min(budget, cap)
        if (spare != null) budget = Math.min(budget, spare)
        // Refused before a byte is written when the sizes the entries declare do not fit
        // (each entry is held to its declared size while it is written).
        val declared = declaredSize(entries)
        if (declared > budget) {
            throw unsafe("its entries declare $declared bytes unpacked, more than the $budget it may take (the cap, or the free space less ${InstallSpace.RESERVED_SPACE} kept free)")
        }
        val archive = try {
            ZipFile(zip.toFile())
        } catch (error: IOException) {
            throw unsafe("not a readable zip (${ioReason(error)})")
        }
        archive.use {
            val listed = try { it.entries().toList() } catch (error: RuntimeException) { throw unsafe("not a readable zip") }
            if (listed.size != entries.size || listed.indices.any { index -> listed[index].name != entries[index].first.name }) {
                throw unsafe("its entries read differently from its central directory")
            }
            val buffer = ByteArray(1 shl 20)
            var total = 0L
            for ((index, pair) in entries.withIndex()) {
                val (entry, relative) = pair
                val target = Names.appended(destination, relative)
                if (!target.normalize().startsWith(destination.normalize())) throw unsafe("entry ${entry.label} could leave the model's directory")
                if (entry.isDirectory) {
                    io(target) { Files.createDirectories(target) }
                    continue
                }
                io(target) { Files.createDirectories(target.parent) }
                val stream = try { it.getInputStream(listed[index]) } catch (error: IOException) {
                    throw unsafe("entry ${entry.label}: its data cannot be read")
                }
                stream.use { input -> total = write(input, target, entry, buffer, total, budget) }
            }
        }
        return listing.stored
    }

    /** Writes one entry, held to its declared size and the budget; returns the new total. */
    private fun write(input: InputStream, target: Path, entry: ZipLayout.Entry, buffer: ByteArray, before: Long, budget: Long): Long {
        val channel = try {
            FileChannel.open(target, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)
        } catch (exists: FileAlreadyExistsException) {
            throw unsafe("entry ${entry.label} appears twice")
        } catch (error: IOException) {
            throw ClientError.Io(target.toString(), "cannot create: ${ioReason(error)}")
        }
        val declared = entry.size
        val crc = CRC32()
        var written = 0L
        var total = before
        channel.use {
            val view = ByteBuffer.wrap(buffer)
            while (true) {
                // One byte past what the entry declares is enough to see it inflate past it.
                val want = Math.min(buffer.size.toLong(), declared - written + 1).toInt()
                val count = try { input.read(buffer, 0, want) } catch (error: IOException) {
                    throw unsafe("entry ${entry.label}: its data cannot be inflated (damaged, or not what its method says)")
                }
                if (count < 0) break
                written += count
                total += count
                if (written > declared) throw unsafe("entry ${entry.label} inflates past the $declared bytes it declares")
                if (total > budget) throw unsafe("unpacks to more than $budget bytes (the cap, or the free space)")
                crc.update(buffer, 0, count)
                view.clearForAnyJava()
                view.limitForAnyJava(count)
                io(target) { while (view.hasRemaining()) it.write(view) }
            }
        }
        if (written != declared) throw unsafe("entry ${entry.label} unpacks to $written bytes, not the $declared it declares")
        if (crc.value != entry.crc) throw unsafe("entry ${entry.label} fails its CRC-32")
        return total
    }

    private inline fun <T> io(path: Path, body: () -> T): T = try {
        body()
    } catch (error: IOException) {
        throw ClientError.Io(path.toString(), ioReason(error))
    }
}
