package dev.modelcast.client.net

import dev.modelcast.client.ClientError
import java.io.IOException
import java.nio.ByteBuffer
import java.nio.channels.FileChannel
import java.nio.file.Path
import java.nio.file.StandardOpenOption
import java.security.MessageDigest

/** A fresh SHA-256 (every JVM and Android has it). */
internal fun sha256(): MessageDigest = MessageDigest.getInstance("SHA-256")

private val HEX = "0123456789abcdef".toCharArray()

/** Lowercase hex, as modelcast writes digests. */
internal fun hex(bytes: ByteArray): String {
    val out = CharArray(bytes.size * 2)
    for (index in bytes.indices) {
        val value = bytes[index].toInt() and 0xff
        out[index * 2] = HEX[value ushr 4]
        out[index * 2 + 1] = HEX[value and 0x0f]
    }
    return String(out)
}

/** True for exactly 64 lowercase hexadecimal digits (a digest's only spelling, and a safe file name). */
internal fun isSha256Hex(text: String): Boolean =
    text.length == 64 && text.all { it in '0'..'9' || it in 'a'..'f' }

/** The bytes of a 64-digit lowercase hex digest (checked by the caller). */
internal fun unhex(text: String): ByteArray = ByteArray(text.length / 2) { index ->
    ((Character.digit(text[index * 2], 16) shl 4) or Character.digit(text[index * 2 + 1], 16)).toByte()
}

/** SHA-256 of a file, lowercase hex, read in 1 MiB pieces. */
fun sha256Hex(path: Path): String {
    try {
        FileChannel.open(path, StandardOpenOption.READ).use { channel ->
            val digest = sha256()
            digestPrefix(channel, channel.size(), digest, ByteBuffer.allocate(1 shl 20))
            return hex(digest.digest())
        }
    } catch (error: IOException) {
        throw ClientError.Io(path.toString(), ioReason(error))
    }
}

/** Adds the first `length` bytes of `channel` to `digest`, read into `buffer` (positional: the channel's position is left alone). */
internal fun digestPrefix(channel: FileChannel, length: Long, digest: MessageDigest, buffer: ByteBuffer) {
    var offset = 0L
    while (offset < length) {
        buffer.clearForAnyJava()
        if (length - offset < buffer.capacity()) buffer.limitForAnyJava((length - offset).toInt())
        val count = channel.read(buffer, offset)
        if (count < 0) throw IOException("the file ended at $offset of $length bytes")
        digest.update(buffer.array(), buffer.arrayOffset(), count)
        offset += count
    }
}

/**
 * `text` with A-Z lowered, nothing else changed: for protocol tokens (a scheme, a header
 * value), which are ASCII, without the locale-sensitive and version-dependent String APIs.
 */
internal fun asciiLowercase(text: String): String {
    if (text.none { it in 'A'..'Z' }) return text
    val out = CharArray(text.length) { index -> text[index].let { if (it in 'A'..'Z') (it + ('a' - 'A')) else it } }
    return String(out)
}
