package dev.modelcast.client.trust

import java.math.BigInteger
import java.security.MessageDigest

/**
 * Ed25519 signature verification (RFC 8032 §5.1.7), in pure Kotlin: Android's
 * java.security has no Ed25519 before API 33 and this library runs on API 26.
 *
 * It accepts exactly what the Swift client's verifier accepts (swift-crypto's
 * `Curve25519.Signing`, BoringSSL's `ED25519_verify` on Linux), so a signature one client
 * takes the other takes too:
 * - S must be below the group order L (a larger S is another spelling of the same
 *   signature: refused, as RFC 8032 requires);
 * - the check is cofactorless, `[S]B - [k]A` encoded and compared byte for byte with R
 *   (libsodium and minisign do the same), so an R that is not a canonical point encoding
 *   never matches;
 * - the public key is decoded as BoringSSL decodes it: y is read modulo p and an x of 0
 *   takes either sign bit. Neither rule matters for a key minisign made (it writes
 *   canonical encodings); RFC 8032's stricter decoding would refuse keys the Swift client
 *   accepts. A key whose y has no x on the curve is refused.
 *
 * BigInteger arithmetic is plenty for a few verifications per manifest (see the timing in
 * Ed25519Test); nothing here is secret, so nothing needs to run in constant time.
 */
object Ed25519 {
    /** Bytes in a public key. */
    const val PUBLIC_KEY_BYTES = 32
    /** Bytes in a signature: R (32) then S (32). */
    const val SIGNATURE_BYTES = 64

    /**
     * Whether [signature] (R ‖ S, 64 bytes) is [publicKey]'s (32 bytes) Ed25519 signature of
     * [message]. Any other length is simply not a valid signature (false), as swift-crypto
     * answers.
     */
    fun verify(signature: ByteArray, message: ByteArray, publicKey: ByteArray): Boolean {
        if (signature.size != SIGNATURE_BYTES || publicKey.size != PUBLIC_KEY_BYTES) return false
        val s = littleEndian(signature, 32, 32)
        if (s >= EdwardsPoint.ORDER) return false
        val a = EdwardsPoint.decode(publicKey) ?: return false
        val sha512 = MessageDigest.getInstance("SHA-512")
        sha512.update(signature, 0, 32)
        sha512.update(publicKey)
        sha512.update(message)
        val k = littleEndian(sha512.digest()).mod(EdwardsPoint.ORDER)
        val check = EdwardsPoint.BASE.timesPlus(s, a.negate(), k).encode()
        for (index in 0 until 32) if (check[index] != signature[index]) return false
        return true
    }
}

/** The unsigned little-endian integer in [count] bytes of [bytes] from [offset]. */
internal fun littleEndian(bytes: ByteArray, offset: Int = 0, count: Int = bytes.size): BigInteger {
    val bigEndian = ByteArray(count + 1)  // a leading zero keeps it positive
    for (index in 0 until count) bigEndian[count - index] = bytes[offset + index]
    return BigInteger(bigEndian)
}

/**
 * A point of edwards25519 (−x² + y² = 1 + d·x²·y² over GF(2²⁵⁵ − 19)) in extended
 * coordinates: x = X/Z, y = Y/Z, x·y = T/Z, which make addition need no inversion.
 */
internal class EdwardsPoint(val x: BigInteger, val y: BigInteger, val z: BigInteger, val t: BigInteger) {
    /** −P: the point with the opposite x. */
    fun negate(): EdwardsPoint = EdwardsPoint(field(-x), y, z, field(-t))

    /**
     * P + Q by the unified formula for a = −1 (Hisil–Wong–Carter–Dawson 2008, "add-2008-hwcd-3"):
     * complete on this curve because d is not a square, so it also serves P = Q and the
     * identity.
     */
    operator fun plus(other: EdwardsPoint): EdwardsPoint {
        val a = field((y - x) * (other.y - other.x))
        val b = field((y + x) * (other.y + other.x))
        val c = field(field(t * TWO_D) * other.t)
        val d = field((z * other.z).shiftLeft(1))
        val e = b - a
        val f = d - c
        val g = d + c
        val h = b + a
        return EdwardsPoint(field(e * f), field(g * h), field(f * g), field(e * h))
    }

    /** 2P ("dbl-2008-hwcd" for a = −1): cheaper than P + P, and most of a multiplication's work. */
    fun doubled(): EdwardsPoint {
        val a = field(x * x)
        val b = field(y * y)
        val c = field((z * z).shiftLeft(1))
        val sum = x + y
        val e = field(sum * sum) - a - b
        val g = b - a
        val f = g - c
        val h = -a - b
        return EdwardsPoint(field(e * f), field(g * h), field(f * g), field(e * h))
    }

    /**
     * [s]·this + [k]·[other], both scalars below 2²⁵³, in one pass over their bits
     * (Straus–Shamir): one doubling per bit instead of two.
     */
    fun timesPlus(s: BigInteger, other: EdwardsPoint, k: BigInteger): EdwardsPoint {
        val both = this + other
        var result = IDENTITY
        for (bit in maxOf(s.bitLength(), k.bitLength()) - 1 downTo 0) {
            result = result.doubled()
            val sBit = s.testBit(bit)
            val kBit = k.testBit(bit)
            if (sBit && kBit) result += both else if (sBit) result += this else if (kBit) result += other
        }
        return result
    }

    /** The 32-byte encoding: y little-endian, the top bit holding x's parity (RFC 8032 §5.1.2). */
    fun encode(): ByteArray {
        val inverse = z.modInverse(P)
        val affineX = field(x * inverse)
        val affineY = field(y * inverse)
        val out = ByteArray(32)
        val bytes = affineY.toByteArray()  // big-endian, maybe with a leading zero byte
        for (index in 0 until minOf(32, bytes.size)) out[index] = bytes[bytes.size - 1 - index]
        if (affineX.testBit(0)) out[31] = (out[31].toInt() or 0x80).toByte()
        return out
    }

    companion object {
        /** The field prime 2²⁵⁵ − 19. */
        val P: BigInteger = BigInteger.ONE.shiftLeft(255) - BigInteger.valueOf(19)
        /** The order L of the base point: 2²⁵² + 27742317777372353535851937790883648493. */
        val ORDER: BigInteger = BigInteger.ONE.shiftLeft(252) + BigInteger("27742317777372353535851937790883648493")
        /** The curve constant d = −121665/121666. */
        val D: BigInteger = field(BigInteger.valueOf(-121665) * BigInteger.valueOf(121666).modInverse(P))
        private val TWO_D: BigInteger = field(D.shiftLeft(1))
        /** √−1 = 2^((p−1)/4), for the second square-root candidate. */
        private val SQRT_MINUS_ONE: BigInteger = BigInteger.valueOf(2).modPow((P - BigInteger.ONE).shiftRight(2), P)
        private val ROOT_EXPONENT: BigInteger = (P - BigInteger.valueOf(5)).shiftRight(3)

        val IDENTITY = EdwardsPoint(BigInteger.ZERO, BigInteger.ONE, BigInteger.ONE, BigInteger.ZERO)
        /** The base point B: y = 4/5, x even. */
        val BASE: EdwardsPoint = run {
            val y = field(BigInteger.valueOf(4) * BigInteger.valueOf(5).modInverse(P))
            val x = recoverX(y, false) ?: throw IllegalStateException("the base point's x")
            EdwardsPoint(x, y, BigInteger.ONE, field(x * y))
        }

        fun field(value: BigInteger): BigInteger = value.mod(P)

        /**
         * The point a 32-byte encoding names, or null when its y has no point on the curve.
         * As BoringSSL decodes (see [Ed25519]): y modulo p, and x = 0 with either sign bit.
         */
        fun decode(encoded: ByteArray): EdwardsPoint? {
            if (encoded.size != 32) return null
            val bytes = encoded.copyOf()
            val negative = bytes[31].toInt() and 0x80 != 0
            bytes[31] = (bytes[31].toInt() and 0x7f).toByte()
            val y = field(littleEndian(bytes))
            val x = recoverX(y, negative) ?: return null
            return EdwardsPoint(x, y, BigInteger.ONE, field(x * y))
        }

        /**
         * The x with x² = (y² − 1)/(d·y² + 1) and the given parity, or null when that is no
         * square (RFC 8032 §5.1.3 steps 2–4, without its refusal of x = 0 with the sign set).
         */
        private fun recoverX(y: BigInteger, negative: Boolean): BigInteger? {
            val ySquared = field(y * y)
            val u = field(ySquared - BigInteger.ONE)
            val v = field(D * ySquared + BigInteger.ONE)
            val v3 = field(field(v * v) * v)
            val v7 = field(field(v3 * v3) * v)
            var x = field(field(u * v3) * field(u * v7).modPow(ROOT_EXPONENT, P))
            val vx2 = field(field(x * x) * v)
            x = when {
                vx2 == u -> x
                vx2 == field(-u) -> field(x * SQRT_MINUS_ONE)
                else -> return null
            }
            if (x.testBit(0) != negative) x = field(-x)
            return x
        }
    }
}
