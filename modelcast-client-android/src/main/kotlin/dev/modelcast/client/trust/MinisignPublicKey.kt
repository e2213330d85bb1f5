package dev.modelcast.client.trust

/**
 * A minisign Ed25519 public key: a key id and 32 key bytes.
 *
 * The file form is two lines:
 *
 *     untrusted comment: minisign public key D278303F259DBD05
 *     RWQFvZ0lPzB40jjUo6G6KfP3q+inOF1K/XwPIec7tb086rCJBbTSbVe8
 *
 * where the second line is base64 of `"Ed" ‖ key id (8) ‖ public key (32)`, and is also the
 * bare string `minisign -P` takes.
 */
class MinisignPublicKey private constructor(
    /** The key id signatures name this key by. */
    val keyId: MinisignKeyId,
    private val keyBytes: ByteArray
) {
    /** The 32-byte Ed25519 public key (a copy). */
    val key: ByteArray get() = keyBytes.copyOf()

    /** The bare base64 form, as `minisign -P` takes it. */
    val base64: String get() = encodeBase64(ALGORITHM + keyId.bytes + keyBytes)

    /** The public key file's text, exactly as `minisign -G` writes it. */
    val fileContents: String get() = "${UNTRUSTED_COMMENT_PREFIX}minisign public key ${keyId.hex}\n$base64\n"

    /** Whether [signature] is this key's Ed25519 signature of [message]. */
    internal fun verifies(signature: ByteArray, message: ByteArray): Boolean = Ed25519.verify(signature, message, keyBytes)

    override fun toString(): String = "minisign public key ${keyId.hex}"
    override fun equals(other: Any?): Boolean =
        other is MinisignPublicKey && other.keyId == keyId && other.keyBytes.contentEquals(keyBytes)
    override fun hashCode(): Int = keyId.hashCode() * 31 + keyBytes.contentHashCode()

    companion object {
        /** The signature algorithm bytes every minisign key starts with. */
        private val ALGORITHM = "Ed".toByteArray(Charsets.US_ASCII)

        /** Wraps a key id and 32 key bytes; throws [TrustError.SigningKey] for any other key length. */
        fun of(keyId: MinisignKeyId, key: ByteArray): MinisignPublicKey {
            if (key.size != 32) throw TrustError.SigningKey("key id $keyId", "an Ed25519 public key is 32 bytes, not ${key.size}")
            weakness(key)?.let { throw TrustError.SigningKey("key id $keyId", it) }
            return MinisignPublicKey(keyId, key.copyOf())
        }

        /**
         * Parses the bare base64 form (what `minisign -P` takes); [source] names where the
         * string came from in errors. Throws [TrustError.SigningKey].
         */
        fun fromBase64(text: String, source: String = "public key string"): MinisignPublicKey {
            val trimmed = text.trim()
            if (trimmed.contains('\n')) {
                throw TrustError.SigningKey(source, "a bare public key is one base64 line; this text has several lines")
            }
            return decodingLine(trimmed, source, null)
        }

        /**
         * Parses a public key file's text: an `untrusted comment:` line and a base64 line (a
         * trailing newline and CRLF line ends are accepted). Throws [TrustError.SigningKey].
         */
        fun fromFile(text: String, source: String = "public key file"): MinisignPublicKey {
            val lines = minisignLines(text)
            if (lines.size != 2) {
                throw TrustError.SigningKey(source, "a public key file has 2 lines (an untrusted comment and the base64 key), this one has ${lines.size}")
            }
            if (textAfterPrefix(UNTRUSTED_COMMENT_PREFIX, lines[0]) == null) {
                throw TrustError.SigningKey(source, "line 1 must start with \"$UNTRUSTED_COMMENT_PREFIX\"")
            }
            return decodingLine(lines[1], source, 2)
        }

        /** Parses either form: a public key file's text, or the bare base64 string. */
        fun parse(text: String, source: String): MinisignPublicKey =
            if (minisignLines(text.trim()).size <= 1) fromBase64(text, source) else fromFile(text, source)

        private fun decodingLine(line: String, source: String, number: Int?): MinisignPublicKey {
            val location = if (number == null) "" else "line $number: "
            val bytes = decodeBase64(line) ?: throw TrustError.SigningKey(source, "${location}not valid base64")
            if (bytes.size != 42) {
                throw TrustError.SigningKey(source, "${location}a public key decodes to 42 bytes (\"Ed\", key id, key), this decodes to ${bytes.size}")
            }
            val algorithm = bytes.copyOfRange(0, 2)
            if (!algorithm.contentEquals(ALGORITHM)) {
                throw TrustError.SigningKey(source, "${location}unsupported signature algorithm ${describeAlgorithm(algorithm)} (expected 'Ed')")
            }
            val key = bytes.copyOfRange(10, 42)
            weakness(key)?.let { throw TrustError.SigningKey(source, location + it) }
            return MinisignPublicKey(MinisignKeyId.of(bytes.copyOfRange(2, 10))!!, key)
        }

        /** The encodings of the points of order 1, 2, 4 and 8 (compared without the sign bit). */
        private val SMALL_ORDER: List<ByteArray> = listOf(
            ByteArray(32),
            ByteArray(32).also { it[0] = 1 },
            hex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"),
            hex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"),
            ByteArray(32) { index -> when (index) { 0 -> 0xec.toByte(); 31 -> 0x7f; else -> 0xff.toByte() } }
        )

        private fun hex(text: String) = ByteArray(text.length / 2) { Integer.parseInt(text.substring(2 * it, 2 * it + 2), 16).toByte() }

        /**
         * Why [key] is no key to trust, or null: a point of small order, or an encoding that is
         * not canonical (y ≥ p). Ed25519 verification as RFC 8032 (and [Ed25519]) does it
         * accepts such keys, and signatures for them can be forged without any secret: a
         * pinned one would let anyone sign manifests. The Swift client and minisign refuse them too.
         */
        internal fun weakness(key: ByteArray): String? {
            val last = key[31].toInt() and 0x7f
            for (point in SMALL_ORDER) {
                if ((0 until 31).all { key[it] == point[it] } && last == point[31].toInt()) {
                    return "the key is a point of small order, for which signatures can be forged: not a key to trust"
                }
            }
            if (last == 0x7f && (1..30).all { key[it] == 0xff.toByte() } && (key[0].toInt() and 0xff) >= 0xed) {
                return "the key is not a canonical Ed25519 encoding (y is not below 2^255 - 19): not a key to trust"
            }
            return null
        }
    }
}
