package dev.modelcast.client.trust

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Test

class Blake2bTest {
    @Test
    fun rfc7693AppendixA() {
        // BLAKE2b-512("abc"), RFC 7693 Appendix A.
        assertEquals(
            "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1" +
                "7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923",
            Blake2b.hash("abc".toByteArray()).hexString()
        )
    }

    @Test
    fun theEmptyMessageIsOneFinalBlock() {
        // BLAKE2b-512 of nothing (the reference implementation's known answer).
        assertEquals(
            "786a02f742015903c6c6fd852552d272912f4740e15847618a86e217f71f5419" +
                "d25e1031afee585313896444934eb04b903a685b1448b755d56f701afe9be2ce",
            Blake2b.hash(ByteArray(0)).hexString()
        )
    }

    /**
     * RFC 7693 Appendix E's self-test: digests of 20, 32, 48 and 64 bytes over inputs of 0, 3,
     * 128, 129, 255 and 1024 bytes (block boundaries included), unkeyed and keyed, all hashed
     * into one BLAKE2b-256 whose value the RFC gives.
     */
    @Test
    fun rfc7693AppendixESelfTest() {
        val results = java.io.ByteArrayOutputStream()
        for (outputLength in intArrayOf(20, 32, 48, 64)) {
            for (inputLength in intArrayOf(0, 3, 128, 129, 255, 1024)) {
                val input = selfTestSequence(inputLength, inputLength)
                results.write(Blake2b.hash(input, outputLength))
                results.write(Blake2b.hash(input, outputLength, key = selfTestSequence(outputLength, outputLength)))
            }
        }
        assertEquals(
            "c23a7800d98123bd10f506c61e29da5603d763b8bbad2e737f5e765a7bccd475",
            Blake2b.hash(results.toByteArray(), 32).hexString()
        )
    }

    @Test
    fun lengthsOutsideTheRangeAreRefused() {
        assertThrows(IllegalArgumentException::class.java) { Blake2b.hash(ByteArray(1), 0) }
        assertThrows(IllegalArgumentException::class.java) { Blake2b.hash(ByteArray(1), 65) }
        assertThrows(IllegalArgumentException::class.java) { Blake2b.hash(ByteArray(1), 64, ByteArray(65)) }
    }

    /** The RFC's deterministic input: a Fibonacci sequence over 32-bit words seeded by `0xDEAD4BAD * seed`, top bytes. */
    private fun selfTestSequence(length: Int, seed: Int): ByteArray {
        var a = 0xDEAD4BAD.toInt() * seed
        var b = 1
        return ByteArray(length) {
            val t = a + b
            a = b
            b = t
            (t ushr 24).toByte()
        }
    }
}
