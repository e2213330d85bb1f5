package dev.modelcast.client.trust

import java.math.BigInteger
import java.security.GeneralSecurityException
import java.security.KeyFactory
import java.security.PublicKey
import java.security.Signature
import java.security.spec.X509EncodedKeySpec

/**
 * ECDSA P-256 / SHA-256 with java.security (which Android has from API 1), plus what the JDK
 * and Android providers do not agree on: points are checked on the curve here, compressed
 * points are decompressed here, and a signature must be strict DER (as BoringSSL's
 * `ECDSA_SIG_from_bytes`, which swift-crypto uses) before any provider sees it.
 */
internal object EcdsaP256 {
    /** The field prime 2²⁵⁶ − 2²²⁴ + 2¹⁹² + 2⁹⁶ − 1. */
    private val P = BigInteger("ffffffff00000001000000000000000000000000ffffffffffffffffffffffff", 16)
    /** The curve's b (a = −3). */
    private val B = BigInteger("5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604b", 16)
    /** The group order n. */
    private val N = BigInteger("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551", 16)

    /**
     * The uncompressed point (`04 X Y`, 65 bytes) of an encoded point (uncompressed, or
     * compressed `02|03 X`); null when it is neither form or not on the curve (coordinates
     * must be below p).
     */
    fun uncompressedPoint(bytes: ByteArray): ByteArray? {
        val x: BigInteger
        val y: BigInteger
        when {
            bytes.size == 65 && bytes[0] == 0x04.toByte() -> {
                x = BigInteger(1, bytes.copyOfRange(1, 33))
                y = BigInteger(1, bytes.copyOfRange(33, 65))
                if (x >= P || y >= P || y.multiply(y).mod(P) != curveRight(x)) return null
            }
            bytes.size == 33 && (bytes[0] == 0x02.toByte() || bytes[0] == 0x03.toByte()) -> {
                x = BigInteger(1, bytes.copyOfRange(1, 33))
                if (x >= P) return null
                val right = curveRight(x)
                // p ≡ 3 (mod 4): a square's root is its (p+1)/4-th power.
                val root = right.modPow(P.add(BigInteger.ONE).shiftRight(2), P)
                if (root.multiply(root).mod(P) != right) return null
                val odd = bytes[0] == 0x03.toByte()
                y = if (root.testBit(0) == odd) root else P.subtract(root).mod(P)
                if (y.testBit(0) != odd) return null  // y = 0 has no odd twin
            }
            else -> return null
        }
        return byteArrayOf(0x04) + fixed32(x) + fixed32(y)
    }

    /** The java.security key of a valid uncompressed point (from [uncompressedPoint]). */
    fun publicKey(uncompressed: ByteArray): PublicKey =
        KeyFactory.getInstance("EC").generatePublic(X509EncodedKeySpec(SubjectPublicKeyInfo.P256_UNCOMPRESSED_PREFIX + uncompressed))

    /**
     * Whether [signature] (DER) is a valid ECDSA P-256 / SHA-256 signature of [message] by
     * [key]. Malformed or non-strict DER, and r or s outside 1…n−1, are invalid signatures
     * (false), as libcrypto answers.
     */
    fun verify(key: PublicKey, signature: ByteArray, message: ByteArray): Boolean {
        val (r, s) = parseStrictDer(signature) ?: return false
        if (r.signum() <= 0 || r >= N || s.signum() <= 0 || s >= N) return false
        return try {
            val verifier = Signature.getInstance("SHA256withECDSA")
            verifier.initVerify(key)
            verifier.update(message)
            // The provider sees only the canonical encoding of (r, s), so no provider's own DER
            // leniency (or strictness) decides anything: this function does.
            verifier.verify(der(r, s))
        } catch (error: GeneralSecurityException) {
            false
        }
    }

    /** The DER `SEQUENCE { INTEGER r, INTEGER s }` of two positive integers below 2²⁵⁶. */
    private fun der(r: BigInteger, s: BigInteger): ByteArray {
        fun integer(value: BigInteger): ByteArray {
            val bytes = value.toByteArray()  // minimal two's complement: a leading 0 only when needed
            return byteArrayOf(0x02, bytes.size.toByte()) + bytes
        }
        val body = integer(r) + integer(s)
        return byteArrayOf(0x30, body.size.toByte()) + body  // at most 70 bytes: the short form
    }

    /**
     * r and s of a DER `SEQUENCE { INTEGER r, INTEGER s }` in its one strict form: minimal
     * lengths, minimal non-negative integers, nothing after; else null. (A raw 64-byte r ‖ s
     * is not DER and is refused, as the Swift client refuses it.)
     */
    fun parseStrictDer(der: ByteArray): Pair<BigInteger, BigInteger>? {
        var offset = 0
        fun item(tag: Int): Pair<Int, Int>? {
            if (der.size - offset < 2 || der[offset].toInt() and 0xff != tag) return null
            var index = offset + 1
            val first = der[index++].toInt() and 0xff
            val length = when {
                first < 0x80 -> first
                first == 0x81 -> {
                    if (index >= der.size) return null
                    val value = der[index++].toInt() and 0xff
                    if (value < 0x80) return null  // the short form would do
                    value
                }
                else -> return null  // 256 bytes or more, or indefinite: no P-256 signature
            }
            if (der.size - index < length) return null
            offset = index + length
            return Pair(index, length)
        }
        val sequence = item(0x30) ?: return null
        if (offset != der.size) return null
        offset = sequence.first
        fun integer(): BigInteger? {
            val (start, length) = item(0x02) ?: return null
            if (length == 0) return null
            val lead = der[start].toInt() and 0xff
            if (lead and 0x80 != 0) return null  // negative
            if (lead == 0 && length > 1 && der[start + 1].toInt() and 0x80 == 0) return null  // a needless leading zero
            return BigInteger(1, der.copyOfRange(start, start + length))
        }
        val r = integer() ?: return null
        val s = integer() ?: return null
        if (offset != sequence.first + sequence.second) return null
        return Pair(r, s)
    }

    /** x³ − 3x + b (mod p). */
    private fun curveRight(x: BigInteger): BigInteger =
        x.multiply(x).multiply(x).subtract(x.multiply(BigInteger.valueOf(3))).add(B).mod(P)

    private fun fixed32(value: BigInteger): ByteArray {
        val bytes = value.toByteArray()
        val out = ByteArray(32)
        val count = minOf(32, bytes.size)
        System.arraycopy(bytes, bytes.size - count, out, 32 - count, count)
        return out
    }
}
