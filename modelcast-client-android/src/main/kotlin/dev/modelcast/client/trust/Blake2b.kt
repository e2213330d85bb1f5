package dev.modelcast.client.trust

/**
 * BLAKE2b (RFC 7693), with any digest length from 1 to 64 bytes and an optional key.
 *
 * minisign's `ED` signatures sign the BLAKE2b-512 of the message, and no JDK or Android
 * release ships BLAKE2b, hence this small implementation. The output length (and key
 * length) is mixed into the parameter block, so a shorter digest is not a cut BLAKE2b-512.
 * Written for clarity: manifests are at most a few MiB.
 */
object Blake2b {
    /** The longest digest, and what minisign uses. */
    const val MAX_OUTPUT_BYTES = 64
    /** The longest key. */
    const val MAX_KEY_BYTES = 64
    private const val BLOCK_BYTES = 128

    /** SHA-512's initial hash value (RFC 7693 §2.6). */
    private val IV = longArrayOf(
        0x6a09e667f3bcc908L, unsigned("bb67ae8584caa73b"), 0x3c6ef372fe94f82bL, unsigned("a54ff53a5f1d36f1"),
        0x510e527fade682d1L, unsigned("9b05688c2b3e6c1f"), 0x1f83d9abfb41bd6bL, 0x5be0cd19137e2179L
    )

    /** A 64-bit word written in hex with its top bit set (Kotlin has no literal for it). */
    private fun unsigned(hex: String): Long = java.lang.Long.parseUnsignedLong(hex, 16)

    /** The message word order of each of the twelve rounds (RFC 7693 §2.7; rounds 10 and 11 reuse 0 and 1). */
    private val SIGMA = arrayOf(
        intArrayOf(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        intArrayOf(14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3),
        intArrayOf(11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4),
        intArrayOf(7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8),
        intArrayOf(9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13),
        intArrayOf(2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9),
        intArrayOf(12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11),
        intArrayOf(13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10),
        intArrayOf(6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5),
        intArrayOf(10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0)
    )

    /**
     * The BLAKE2b digest of [message], [outputLength] bytes long (1…64; 64 is BLAKE2b-512,
     * minisign's prehash), keyed by [key] (0…64 bytes; empty for the plain hash).
     */
    fun hash(message: ByteArray, outputLength: Int = MAX_OUTPUT_BYTES, key: ByteArray = ByteArray(0)): ByteArray {
        require(outputLength in 1..MAX_OUTPUT_BYTES) { "a BLAKE2b digest is 1 to 64 bytes, not $outputLength" }
        require(key.size <= MAX_KEY_BYTES) { "a BLAKE2b key is at most 64 bytes, not ${key.size}" }
        val state = IV.copyOf()
        // Parameter block word 0: digest length, key length, fanout 1, depth 1.
        state[0] = state[0] xor (0x01010000L or (key.size.toLong() shl 8) or outputLength.toLong())
        // A key is hashed as a first block of its own, zero-padded.
        val input = if (key.isEmpty()) message else key.copyOf(BLOCK_BYTES) + message
        var counter = 0L  // bytes hashed so far; 2^63 bytes is beyond any input here
        var offset = 0
        // Every block but the last is compressed as it is; the last (maybe partial, or the one
        // empty block of an empty message) carries the final flag.
        while (input.size - offset > BLOCK_BYTES) {
            counter += BLOCK_BYTES
            compress(state, input, offset, counter, last = false)
            offset += BLOCK_BYTES
        }
        val tail = input.copyOfRange(offset, input.size).copyOf(BLOCK_BYTES)
        counter += input.size - offset
        compress(state, tail, 0, counter, last = true)
        val out = ByteArray(outputLength)
        for (index in 0 until outputLength) out[index] = (state[index / 8] ushr (8 * (index % 8))).toByte()
        return out
    }

    /** The compression function F (RFC 7693 §3.2) over the 128-byte block of [block] at [offset]. */
    private fun compress(state: LongArray, block: ByteArray, offset: Int, counter: Long, last: Boolean) {
        val m = LongArray(16) { word -> readLittleEndianLong(block, offset + 8 * word) }
        val v = LongArray(16)
        for (index in 0 until 8) {
            v[index] = state[index]
            v[index + 8] = IV[index]
        }
        v[12] = v[12] xor counter  // the counter's high word stays 0
        if (last) v[14] = v[14].inv()
        for (round in 0 until 12) {
            val s = SIGMA[round % 10]
            mix(v, 0, 4, 8, 12, m[s[0]], m[s[1]])
            mix(v, 1, 5, 9, 13, m[s[2]], m[s[3]])
            mix(v, 2, 6, 10, 14, m[s[4]], m[s[5]])
            mix(v, 3, 7, 11, 15, m[s[6]], m[s[7]])
            mix(v, 0, 5, 10, 15, m[s[8]], m[s[9]])
            mix(v, 1, 6, 11, 12, m[s[10]], m[s[11]])
            mix(v, 2, 7, 8, 13, m[s[12]], m[s[13]])
            mix(v, 3, 4, 9, 14, m[s[14]], m[s[15]])
        }
        for (index in 0 until 8) state[index] = state[index] xor v[index] xor v[index + 8]
    }

    /** The mixing function G (RFC 7693 §3.1), rotations 32, 24, 16, 63. */
    private fun mix(v: LongArray, a: Int, b: Int, c: Int, d: Int, x: Long, y: Long) {
        v[a] = v[a] + v[b] + x
        v[d] = java.lang.Long.rotateRight(v[d] xor v[a], 32)
        v[c] = v[c] + v[d]
        v[b] = java.lang.Long.rotateRight(v[b] xor v[c], 24)
        v[a] = v[a] + v[b] + y
        v[d] = java.lang.Long.rotateRight(v[d] xor v[a], 16)
        v[c] = v[c] + v[d]
        v[b] = java.lang.Long.rotateRight(v[b] xor v[c], 63)
    }

    private fun readLittleEndianLong(bytes: ByteArray, offset: Int): Long {
        var value = 0L
        for (index in 7 downTo 0) value = (value shl 8) or (bytes[offset + index].toLong() and 0xff)
        return value
    }
}
