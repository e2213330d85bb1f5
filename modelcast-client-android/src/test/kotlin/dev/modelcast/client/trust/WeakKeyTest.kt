package dev.modelcast.client.trust

import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.util.Base64

/**
 * A pinned key for which signatures can be forged without a secret (a point of small order,
 * or a non-canonical encoding) is refused when it is read, with either sign bit, as the
 * Swift client refuses it (SigningTests.testWeakPublicKeysAreRefused).
 */
class WeakKeyTest {
    private val weak = listOf(
        "00".repeat(32), "01" + "00".repeat(31),
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
        "ec" + "ff".repeat(30) + "7f", "ed" + "ff".repeat(30) + "7f", "ee" + "ff".repeat(30) + "7f", "ff" + "ff".repeat(30) + "7f")

    private fun line(hex: String, signBit: Boolean): String {
        val key = ByteArray(32) { Integer.parseInt(hex.substring(2 * it, 2 * it + 2), 16).toByte() }
        if (signBit) key[31] = (key[31].toInt() or 0x80).toByte()
        return Base64.getEncoder().encodeToString("Ed".toByteArray() + byteArrayOf(1, 2, 3, 4, 5, 6, 7, 8) + key)
    }

    @Test
    fun weakKeysAreRefused() {
        for (hex in weak) for (signBit in listOf(false, true)) {
            val error = assertThrows(TrustError.SigningKey::class.java, { MinisignPublicKey.fromBase64(line(hex, signBit)) }, "$hex sign $signBit")
            assertTrue(error.message!!.contains("not a key to trust"), error.message)
        }
    }

    @Test
    fun aGenuineKeyIsTaken() {
        // RFC 8032's first test key.
        val key = MinisignPublicKey.fromBase64(line("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", false))
        assertTrue(key.key.size == 32)
    }
}
