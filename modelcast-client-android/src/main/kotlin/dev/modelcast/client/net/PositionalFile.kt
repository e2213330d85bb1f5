package dev.modelcast.client.net

import dev.modelcast.client.ClientError
import java.io.Closeable
import java.io.IOException
import java.nio.ByteBuffer
import java.nio.channels.FileChannel
import java.nio.file.LinkOption
import java.nio.file.Path
import java.nio.file.StandardOpenOption

/**
 * Bytes of an older artifact read at its offsets: the seed a segmented download copies
 * from (an installed plain file, or the unpacked entries of a zipped directory).
 */
interface SeedBytes {
    /** What error messages name. */
    val path: String

    /** `count` bytes at `offset` of the old artifact (fewer when they are not all there). */
    fun read(count: Int, offset: Long): ByteArray
}

/**
 * A file read and written at explicit offsets (a `FileChannel`'s positional reads and
 * writes), so several range requests can each write their segments where they belong
 * without sharing a file position. Errors are [ClientError.Io] naming the file.
 */
class PositionalFile private constructor(private val file: Path, private val channel: FileChannel) : SeedBytes, Closeable {
    override val path: String get() = file.toString()

    /** The file's size now. */
    fun size(): Long = io("cannot read its size") { channel.size() }

    /** Cuts or extends the file to `size` bytes (an extension reads as zeros). */
    fun truncate(size: Long) {
        io("cannot set its size") {
            val now = channel.size()
            if (size < now) {
                channel.truncate(size)
            } else if (size > now) {
                // One zero byte at the new end: the file system leaves the gap as a hole (zeros).
                channel.write(ByteBuffer.wrap(ByteArray(1)), size - 1)
            }
            Unit
        }
    }

    /** Writes `count` bytes of `bytes` from `from` at `offset`. */
    fun write(bytes: ByteArray, offset: Long, from: Int = 0, count: Int = bytes.size - from) {
        io("write failed") {
            val buffer = ByteBuffer.wrap(bytes, from, count)
            var at = offset
            while (buffer.hasRemaining()) at += channel.write(buffer, at)
        }
    }

    /** Reads `count` bytes at `offset`; fewer only at the file's end. */
    override fun read(count: Int, offset: Long): ByteArray {
        val bytes = ByteArray(count)
        val got = readInto(bytes, count, offset)
        return if (got == count) bytes else bytes.copyOf(got)
    }

    /** Reads up to `count` bytes at `offset` into `bytes` from 0; returns how many (fewer only at the end). */
    fun readInto(bytes: ByteArray, count: Int, offset: Long): Int = io("read failed") {
        val buffer = ByteBuffer.wrap(bytes, 0, count)
        var at = offset
        while (buffer.hasRemaining()) {
            val read = channel.read(buffer, at)
            if (read < 0) break
            at += read
        }
        buffer.position()
    }

    /** Forces the written bytes to the disk. */
    fun force() = io("cannot sync") { channel.force(true) }

    override fun close() {
        try {
            channel.close()
        } catch (error: IOException) {
        }
    }

    private inline fun <T> io(what: String, body: () -> T): T = try {
        body()
    } catch (error: IOException) {
        throw ClientError.Io(file.toString(), "$what: ${ioReason(error)}")
    }

    companion object {
        /** Opens `path` for reading and writing, creating it when missing (never through a link). */
        fun openForWriting(path: Path): PositionalFile = open(path, "cannot open for writing",
            StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)

        /** Opens `path` for reading only. */
        fun openForReading(path: Path): PositionalFile = open(path, "cannot open for reading", StandardOpenOption.READ)

        private fun open(path: Path, what: String, vararg options: java.nio.file.OpenOption): PositionalFile = try {
            PositionalFile(path, FileChannel.open(path, *options))
        } catch (error: IOException) {
            throw ClientError.Io(path.toString(), "$what: ${ioReason(error)}")
        }
    }
}
