package dev.modelcast.client.install

import dev.modelcast.client.quoted
import java.nio.charset.StandardCharsets

/**
 * The byte layout of a zip archive, checked so that what an extractor sees is what the entry
 * list shows (the Swift client's `ZipLayout`): every byte before the central directory
 * belongs to exactly one listed entry (its local header, name, extra field, data and data
 * descriptor), in order, with no gap and no overlap; each local header names its entry as
 * the central directory does; and no entry carries a second name (an Info-ZIP Unicode Path
 * extra field, 0x7075, which unzip and bsdtar extract to instead of the checked name).
 * Streaming extractors walk local headers, ordinary ones read the central directory: a zip
 * passing this check shows both the same entries.
 *
 * [check] also returns each entry as the central directory lists it, with what the JDK's
 * `ZipEntry` does not show: the system that made it and its external attributes (a Unix
 * mode, which marks a symbolic link).
 */
internal object ZipLayout {
    /** Reads `count` bytes at `offset` (fewer only at the end of the file). */
    interface Reader {
        fun read(offset: Long, count: Int): ByteArray
    }

    /** What was wrong, in words naming the entry and the offsets. */
    class Problem(val description: String) : Exception(description)

    /** The most central directory bytes read (a zip modelcast writes needs far less). */
    const val MAX_CENTRAL_DIRECTORY = 64 shl 20

    /** Where a stored (uncompressed) entry's bytes lie in the archive: an unpacked copy of the entry holds the same bytes. */
    data class StoredData(val name: String, val offset: Long, val size: Long)

    /** One entry as the central directory lists it. */
    class Entry(
        val name: String,
        internal val nameBytes: ByteArray,
        val flags: Int,
        /** The compression method (0: stored, 8: deflated). */
        val method: Int,
        val crc: Long,
        val compressedSize: Long,
        /** The size it declares unpacked. */
        val size: Long,
        val localOffset: Long,
        /** The system that made it (the high byte of "version made by": 0 DOS, 3 Unix, 19 macOS). */
        val madeBy: Int,
        val externalAttributes: Long
    ) {
        val label: String get() = quoted(name)

        /** The Unix file type bits, where the entry was made on a Unix-like system (else null). */
        val unixType: Int?
            get() = if (madeBy == 3 || madeBy == 19) ((externalAttributes ushr 16) and 0xF000L).toInt() else null

        val isDirectory: Boolean
            get() = name.endsWith("/") || unixType == 0x4000 || (madeBy == 0 && externalAttributes and 0x10L != 0L)
        val isSymbolicLink: Boolean get() = unixType == 0xA000
        /** A FIFO, a device, a socket: nothing the client makes. */
        val isSpecial: Boolean get() = unixType.let { it != null && it != 0 && it != 0x8000 && it != 0x4000 && it != 0xA000 }
    }

    /** A checked archive: its entries in central-directory order, and where its stored files' data lies. */
    class Listing(val entries: List<Entry>, val stored: List<StoredData>)

    /** Checks the archive of `size` bytes `reader` gives. @throws Problem */
    fun check(size: Long, reader: Reader): Listing {
        val end = endRecord(size, reader)
        if (end.directorySize > MAX_CENTRAL_DIRECTORY) {
            throw Problem("a central directory of ${end.directorySize} bytes (more than $MAX_CENTRAL_DIRECTORY)")
        }
        val directory = exactly(reader, end.directoryStart, end.directorySize.toInt(), "the central directory")
        val entries = ArrayList<Entry>()
        var at = 0
        while (at < directory.size) {
            val (entry, next) = centralEntry(directory, at, entries.size)
            entries.add(entry)
            at = next
        }
        if (entries.size.toLong() != end.entryCount) {
            throw Problem("the end record counts ${end.entryCount} entries, the central directory lists ${entries.size}")
        }
        var cursor = 0L
        val stored = ArrayList<StoredData>()
        val ordered = entries.sortedBy { it.localOffset }
        for ((position, entry) in ordered.withIndex()) {
            if (entry.localOffset != cursor) {
                val what = if (entry.localOffset > cursor) "${entry.localOffset - cursor} bytes at offset $cursor"
                else "entry ${entry.label} overlapping the one before it at offset ${entry.localOffset}"
                throw Problem("$what that no listed entry accounts for (a local entry the central directory does not list, or a gap)")
            }
            val next = if (position + 1 < ordered.size) ordered[position + 1].localOffset else end.directoryStart
            val (dataStart, entryEnd) = localEntryEnd(entry, next, reader)
            if (entry.method == 0 && entry.compressedSize > 0 && !entry.name.endsWith("/")) {
                stored.add(StoredData(entry.name, dataStart, entry.compressedSize))
            }
            cursor = entryEnd
        }
        if (cursor != end.directoryStart) {
            throw Problem("${end.directoryStart - cursor} bytes at offset $cursor that no listed entry accounts for (before the central directory)")
        }
        return Listing(entries, stored)
    }

    private class EndRecord(val entryCount: Long, val directoryStart: Long, val directorySize: Long)

    /** The end of central directory record (and its zip64 form); it must end the file: its comment runs exactly to the last byte. */
    private fun endRecord(size: Long, reader: Reader): EndRecord {
        if (size < 22) throw Problem("$size bytes: too short for a zip")
        val tailLength = Math.min(size, 22L + 0xFFFF).toInt()
        val tail = exactly(reader, size - tailLength, tailLength, "the end of the archive")
        var found = -1
        var at = tail.size - 22
        while (at >= 0) {
            if (u32(tail, at) == 0x06054b50L && at + 22 + u16(tail, at + 20) == tail.size) { found = at; break }
            at -= 1
        }
        if (found < 0) throw Problem("no end of central directory record ending the file")
        val recordStart = size - tailLength + found
        var entryCount = u16(tail, found + 10).toLong()
        var directoryStart = u32(tail, found + 16)
        var directorySize = u32(tail, found + 12)
        var directoryEnd = recordStart
        val overflowed = entryCount == 0xFFFFL || directoryStart == 0xFFFFFFFFL || directorySize == 0xFFFFFFFFL
        // A zip64 end record may be written even where the plain fields hold the values
        // (Python's zipfile does): its locator, right before the end record, says so.
        val locator = if (recordStart >= 20) exactly(reader, recordStart - 20, 20, "the zip64 locator") else ByteArray(0)
        val hasLocator = locator.size == 20 && u32(locator, 0) == 0x07064b50L
        if (overflowed && !hasLocator) throw Problem("a zip64 archive without its locator")
        if (hasLocator) {
            val zip64Start = u64(locator, 8)
            if (zip64Start < 0 || zip64Start > recordStart - 76) throw Problem("the zip64 end record at $zip64Start is outside the file")
            val zip64 = exactly(reader, zip64Start, 56, "the zip64 end record")
            if (u32(zip64, 0) != 0x06064b50L) throw Problem("no zip64 end record at $zip64Start")
            if (sum(zip64Start + 12, u64(zip64, 4)) != recordStart - 20) throw Problem("bytes between the zip64 end record and its locator")
            entryCount = u64(zip64, 32)
            directoryStart = u64(zip64, 48)
            directorySize = u64(zip64, 40)
            directoryEnd = zip64Start
        }
        if (directoryStart < 0 || directorySize < 0 || directoryStart > directoryEnd || sum(directoryStart, directorySize) != directoryEnd) {
            throw Problem("the central directory ($directorySize bytes at $directoryStart) does not end where the end record begins ($directoryEnd)")
        }
        return EndRecord(entryCount, directoryStart, directorySize)
    }

    /** One central directory header at `at`; the entry and where the next header starts. */
    private fun centralEntry(bytes: ByteArray, at: Int, index: Int): Pair<Entry, Int> {
        if (at + 46 > bytes.size || u32(bytes, at) != 0x02014b50L) {
            throw Problem("entry ${index + 1}: no central directory header at offset $at of the directory")
        }
        val nameLength = u16(bytes, at + 28)
        val extraLength = u16(bytes, at + 30)
        val commentLength = u16(bytes, at + 32)
        val total = 46 + nameLength + extraLength + commentLength
        if (at + total > bytes.size) throw Problem("entry ${index + 1}: its central header runs past the directory")
        val nameBytes = bytes.copyOfRange(at + 46, at + 46 + nameLength)
        val name = String(nameBytes, StandardCharsets.UTF_8)
        val label = quoted(name)
        val extra = bytes.copyOfRange(at + 46 + nameLength, at + 46 + nameLength + extraLength)
        checkExtra(extra, label, "central")
        var compressed = u32(bytes, at + 20)
        var uncompressed = u32(bytes, at + 24)
        var offset = u32(bytes, at + 42)
        if (compressed == 0xFFFFFFFFL || uncompressed == 0xFFFFFFFFL || offset == 0xFFFFFFFFL) {
            val field = extraField(0x0001, extra) ?: throw Problem("entry $label: sizes past 4 GiB without a zip64 extra field")
            var position = 0
            fun next(): Long {
                if (position + 8 > field.size) throw Problem("entry $label: a zip64 extra field too short for its sizes")
                return u64(field, position).also { position += 8 }
            }
            if (uncompressed == 0xFFFFFFFFL) uncompressed = next()
            if (compressed == 0xFFFFFFFFL) compressed = next()
            if (offset == 0xFFFFFFFFL) offset = next()
        }
        if (compressed < 0 || uncompressed < 0 || offset < 0) throw Problem("entry $label: a negative size or offset")
        val entry = Entry(name, nameBytes, u16(bytes, at + 8), u16(bytes, at + 10), u32(bytes, at + 16), compressed, uncompressed, offset,
            u16(bytes, at + 4) ushr 8, u32(bytes, at + 38))
        return Pair(entry, at + total)
    }

    /** Checks the entry's local header; returns where its data starts and where the entry ends (after its data descriptor, if any). */
    private fun localEntryEnd(entry: Entry, next: Long, reader: Reader): Pair<Long, Long> {
        val header = exactly(reader, entry.localOffset, 30, "entry ${entry.label}'s local header")
        if (u32(header, 0) != 0x04034b50L) throw Problem("entry ${entry.label}: no local header at offset ${entry.localOffset}")
        val nameLength = u16(header, 26)
        val extraLength = u16(header, 28)
        val rest = exactly(reader, entry.localOffset + 30, nameLength + extraLength, "entry ${entry.label}'s local name")
        val localName = rest.copyOfRange(0, nameLength)
        if (!localName.contentEquals(entry.nameBytes)) {
            throw Problem("entry ${entry.label}: its local header names it ${quoted(String(localName, StandardCharsets.UTF_8))}, so extractors disagree on its name")
        }
        checkExtra(rest.copyOfRange(nameLength, rest.size), entry.label, "local")
        val dataStart = entry.localOffset + 30 + nameLength + extraLength
        val dataEnd = sum(dataStart, entry.compressedSize) ?: Long.MAX_VALUE
        if (dataEnd > next) throw Problem("entry ${entry.label} runs past offset $next, where the next entry or the central directory begins")
        if (entry.flags and 0x0008 == 0) return Pair(dataStart, dataEnd)
        // A data descriptor: CRC and the two sizes (4 or 8 bytes each), with or without its signature.
        for (length in intArrayOf(12, 16, 20, 24)) {
            if (dataEnd + length == next) return Pair(dataStart, next)
        }
        return Pair(dataStart, dataEnd)
    }

    /** Refuses a second name hidden in an extra field. */
    private fun checkExtra(extra: ByteArray, label: String, place: String) {
        val field = extraField(0x7075, extra) ?: return
        val name = if (field.size > 5) String(field, 5, field.size - 5, StandardCharsets.UTF_8) else ""
        throw Problem("entry $label: an Info-ZIP Unicode Path extra field (0x7075) in its $place header names it ${quoted(name)}; unzip and bsdtar extract to that name, which is not the one checked")
    }

    /** The data of the first extra field with `id`, or null. */
    private fun extraField(id: Int, extra: ByteArray): ByteArray? {
        var at = 0
        while (at + 4 <= extra.size) {
            val fieldID = u16(extra, at)
            val length = u16(extra, at + 2)
            if (at + 4 + length > extra.size) return null
            if (fieldID == id) return extra.copyOfRange(at + 4, at + 4 + length)
            at += 4 + length
        }
        return null
    }

    /** `a + b`, or null where it would overflow (hostile sizes). */
    private fun sum(a: Long, b: Long): Long? {
        val value = a + b
        return if (((a xor value) and (b xor value)) < 0) null else value
    }

    private fun exactly(reader: Reader, offset: Long, count: Int, what: String): ByteArray {
        val bytes = reader.read(offset, count)
        if (bytes.size != count) throw Problem("$what ($count bytes at offset $offset) runs past the end of the file")
        return bytes
    }

    private fun u16(bytes: ByteArray, at: Int): Int = (bytes[at].toInt() and 0xff) or ((bytes[at + 1].toInt() and 0xff) shl 8)
    private fun u32(bytes: ByteArray, at: Int): Long = u16(bytes, at).toLong() or (u16(bytes, at + 2).toLong() shl 16)
    /** A u64 as a Long: a value past 2^63 reads negative, which every caller refuses. */
    private fun u64(bytes: ByteArray, at: Int): Long = u32(bytes, at) or (u32(bytes, at + 4) shl 32)
}
