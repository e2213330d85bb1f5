package dev.modelcast.client.trust

/**
 * The parts of a DER SubjectPublicKeyInfo (the body of a PEM `PUBLIC KEY`) a model-signing
 * key is judged by: its algorithm, its named curve and its key bits. Read strictly (definite
 * lengths, nothing left over) but only as far as needed to accept a P-256 key or to say what
 * another key is.
 */
internal class SubjectPublicKeyInfo private constructor(
    /** The algorithm's object identifier, dotted (`1.2.840.10045.2.1` for an EC key). */
    val algorithm: String,
    /** The named curve's object identifier, dotted, when the parameters are one. */
    val curve: String?,
    /** The BIT STRING's bytes (for an EC key, the point: `04 X Y` or `02|03 X`). */
    val key: ByteArray
) {
    companion object {
        const val EC_PUBLIC_KEY = "1.2.840.10045.2.1"
        const val PRIME256V1 = "1.2.840.10045.3.1.7"

        /** The DER a P-256 key with an uncompressed point starts with, before its 65 point bytes. */
        val P256_UNCOMPRESSED_PREFIX = byteArrayOf(
            0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86.toByte(), 0x48, 0xce.toByte(), 0x3d, 0x02, 0x01,
            0x06, 0x08, 0x2a, 0x86.toByte(), 0x48, 0xce.toByte(), 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00
        )

        /** Names for the messages that refuse a key. */
        val ALGORITHM_NAMES = mapOf(
            EC_PUBLIC_KEY to "EC", "1.2.840.113549.1.1.1" to "RSA", "1.2.840.10040.4.1" to "DSA",
            "1.3.101.110" to "X25519", "1.3.101.111" to "X448", "1.3.101.112" to "Ed25519", "1.3.101.113" to "Ed448"
        )
        val CURVE_NAMES = mapOf(
            PRIME256V1 to "prime256v1", "1.3.132.0.34" to "secp384r1", "1.3.132.0.35" to "secp521r1", "1.3.132.0.10" to "secp256k1"
        )

        /** The parts of [der], or null when it is not a SubjectPublicKeyInfo. */
        fun parse(der: ByteArray): SubjectPublicKeyInfo? {
            val outer = DerReader(der, 0, der.size)
            val info = outer.read(0x30) ?: return null
            if (!outer.isAtEnd) return null
            val body = DerReader(der, info.first, info.second)
            val identifier = body.read(0x30) ?: return null
            val bits = body.read(0x03) ?: return null
            // A key is whole bytes: the BIT STRING's unused-bits byte must be 0.
            if (!body.isAtEnd || bits.second == 0 || der[bits.first] != 0.toByte()) return null
            val parts = DerReader(der, identifier.first, identifier.second)
            val oid = parts.read(0x06) ?: return null
            val curve = parts.read(0x06)
            return SubjectPublicKeyInfo(
                dotted(der, oid.first, oid.second),
                curve?.let { dotted(der, it.first, it.second) },
                der.copyOfRange(bits.first + 1, bits.first + bits.second)
            )
        }

        /** An object identifier's content bytes as dotted decimal. */
        fun dotted(bytes: ByteArray, offset: Int, count: Int): String {
            val arcs = ArrayList<Long>()
            var value = 0L
            for (index in offset until offset + count) {
                val byte = bytes[index].toInt() and 0xff
                value = (value shl 7) or (byte and 0x7f).toLong()
                if (byte and 0x80 == 0) {
                    arcs.add(value)
                    value = 0
                }
            }
            if (arcs.isEmpty()) return ""
            val first = arcs[0]
            val head = if (first < 80) listOf(first / 40, first % 40) else listOf(2L, first - 80)
            return (head + arcs.drop(1)).joinToString(".") { java.lang.Long.toUnsignedString(it) }
        }
    }
}

/** Reads DER tag-length-value items one after another from `bytes[offset, end)`. */
internal class DerReader(private val bytes: ByteArray, private var offset: Int, length: Int) {
    private val end = offset + length

    val isAtEnd: Boolean get() = offset >= end

    /**
     * The (offset, length) of the next item's content when its tag is [tag] (consumed), else
     * null. Lengths: the short form, or the long form in one or two bytes.
     */
    fun read(tag: Int): Pair<Int, Int>? {
        if (end - offset < 2 || bytes[offset].toInt() and 0xff != tag) return null
        var index = offset + 1
        var length = bytes[index].toInt() and 0xff
        index += 1
        if (length and 0x80 != 0) {
            val count = length and 0x7f
            if (count !in 1..2 || end - index < count) return null
            length = 0
            repeat(count) {
                length = (length shl 8) or (bytes[index].toInt() and 0xff)
                index += 1
            }
        }
        if (end - index < length) return null
        offset = index + length
        return Pair(index, length)
    }
}
