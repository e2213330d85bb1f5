package dev.modelcast.client.testing

import java.io.ByteArrayOutputStream
import java.util.zip.CRC32
import java.util.zip.Deflater

/**
 * Writes zips byte by byte, so a test can make the hostile ones no zip tool writes: a
 * declared size smaller than the data inflates to, a symbolic link, a wrong CRC, a local
 * header naming another file, bytes the central directory does not list.
 */
class ZipWriter {
    class Entry(
        val name: String,
        val data: ByteArray = ByteArray(0),
        val deflate: Boolean = true,
        /** The size the entry declares unpacked (default: the data's). */
        val declaredSize: Long? = null,
        val crc: Long? = null,
        /** Unix mode in the external attributes (made on Unix); 0: none (made on DOS). */
        val unixMode: Int = if (name.endsWith("/")) 0x41ed else 0x81a4,
        val localName: String = name
    )

    private val out = ByteArrayOutputStream()
    private val central = ByteArrayOutputStream()
    private var count = 0

    /** Adds bytes no entry accounts for (a hidden local entry, a gap). */
    fun raw(bytes: ByteArray): ZipWriter = apply { out.write(bytes) }

    fun add(entry: Entry): ZipWriter {
        val name = entry.name.toByteArray(Charsets.UTF_8)
        val localName = entry.localName.toByteArray(Charsets.UTF_8)
        val stored = if (entry.deflate && entry.data.isNotEmpty()) deflate(entry.data) else entry.data
        val method = if (entry.deflate && entry.data.isNotEmpty()) 8 else 0
        val crc = entry.crc ?: CRC32().also { it.update(entry.data) }.value
        val size = entry.declaredSize ?: entry.data.size.toLong()
        val offset = out.size()
        out.u32(0x04034b50).u16(20).u16(0x0800).u16(method).u16(0).u16(0x21).u32(crc).u32(stored.size.toLong()).u32(size)
            .u16(localName.size).u16(0)
        out.write(localName)
        out.write(stored)
        val madeBy = if (entry.unixMode != 0) (3 shl 8) or 20 else 20
        central.u32(0x02014b50).u16(madeBy).u16(20).u16(0x0800).u16(method).u16(0).u16(0x21).u32(crc).u32(stored.size.toLong()).u32(size)
            .u16(name.size).u16(0).u16(0).u16(0).u16(0).u32(entry.unixMode.toLong() shl 16).u32(offset.toLong())
        central.write(name)
        count += 1
        return this
    }

    fun file(name: String, data: ByteArray, deflate: Boolean = true) = add(Entry(name, data, deflate))
    fun directory(name: String) = add(Entry(name, deflate = false))

    fun bytes(): ByteArray {
        val start = out.size()
        val directory = central.toByteArray()
        val result = ByteArrayOutputStream()
        result.write(out.toByteArray())
        result.write(directory)
        if (count > 0xFFFF) {
            // More entries than the end record's 16 bits: a zip64 end record and its locator before it.
            val zip64Start = result.size().toLong()
            result.u32(0x06064b50).u64(44).u16(45).u16(45).u32(0).u32(0).u64(count.toLong()).u64(count.toLong())
                .u64(directory.size.toLong()).u64(start.toLong())
            result.u32(0x07064b50).u32(0).u64(zip64Start).u32(1)
        }
        val entries = Math.min(count, 0xFFFF)
        result.u32(0x06054b50).u16(0).u16(0).u16(entries).u16(entries).u32(directory.size.toLong()).u32(start.toLong()).u16(0)
        return result.toByteArray()
    }

    private fun deflate(data: ByteArray): ByteArray {
        val deflater = Deflater(Deflater.DEFAULT_COMPRESSION, true)
        deflater.setInput(data)
        deflater.finish()
        val buffer = ByteArray(64 * 1024)
        val result = ByteArrayOutputStream()
        while (!deflater.finished()) result.write(buffer, 0, deflater.deflate(buffer))
        deflater.end()
        return result.toByteArray()
    }

    private fun ByteArrayOutputStream.u16(value: Int) = apply { write(value and 0xff); write((value ushr 8) and 0xff) }
    private fun ByteArrayOutputStream.u32(value: Long) = apply { u16((value and 0xffff).toInt()); u16(((value ushr 16) and 0xffff).toInt()) }
    private fun ByteArrayOutputStream.u64(value: Long) = apply { u32(value and 0xffffffffL); u32(value ushr 32) }
}
