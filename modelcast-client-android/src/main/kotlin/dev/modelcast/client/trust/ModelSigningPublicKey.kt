package dev.modelcast.client.trust

import dev.modelcast.client.ClientError
import dev.modelcast.client.quoted
import java.security.MessageDigest
import java.security.PublicKey

/**
 * The public key an app pins to check OpenSSF model signatures: ECDSA P-256, the key
 * `modelcast keygen --model-signing` and `model_signing` use, read from a PEM `PUBLIC KEY`.
 */
class ModelSigningPublicKey private constructor(
    private val key: PublicKey,
    /**
     * The key as OpenSSL and python-cryptography write it: a PEM `PUBLIC KEY`
     * (SubjectPublicKeyInfo, uncompressed point), base64 in 64-column lines, with a trailing
     * newline. A key given with a compressed point is written uncompressed.
     */
    val canonicalPem: String
) {
    /**
     * The key's hint, as a model signature bundle names its signer
     * (`verificationMaterial.publicKey.hint`): the SHA-256 of [canonicalPem], lowercase hex;
     * what `modelcast keygen --model-signing` prints.
     */
    val hint: String = MessageDigest.getInstance("SHA-256").digest(canonicalPem.toByteArray(Charsets.UTF_8)).toHex()

    /** Whether [signature] (DER) is a valid ECDSA P-256 / SHA-256 signature of [message] by this key. */
    fun isValidSignature(signature: ByteArray, message: ByteArray): Boolean = EcdsaP256.verify(key, signature, message)

    override fun toString(): String = "P-256 public key (hint $hint)"
    override fun equals(other: Any?): Boolean = other is ModelSigningPublicKey && other.canonicalPem == canonicalPem
    override fun hashCode(): Int = canonicalPem.hashCode()

    companion object {
        private val NEWLINES = Regex("[\n\r\u000b\u000c\u0085\u2028\u2029]+")

        /**
         * Reads a PEM `PUBLIC KEY` holding an ECDSA P-256 key (uncompressed or compressed
         * point). Throws [ClientError.InvalidModelSigningKey] naming why anything else is
         * refused: no PEM, a private key, another PEM block, another algorithm or curve, a
         * point not on the curve.
         */
        fun parse(pem: String): ModelSigningPublicKey {
            val info = SubjectPublicKeyInfo.parse(publicKeyBlock(pem))
                ?: throw refuse("the PEM PUBLIC KEY does not hold a DER SubjectPublicKeyInfo")
            if (info.algorithm != SubjectPublicKeyInfo.EC_PUBLIC_KEY) {
                val name = SubjectPublicKeyInfo.ALGORITHM_NAMES[info.algorithm] ?: "algorithm ${info.algorithm}"
                throw refuse("the key's algorithm is $name; model signatures use ECDSA P-256 (prime256v1) keys")
            }
            if (info.curve != SubjectPublicKeyInfo.PRIME256V1) {
                val curve = info.curve?.let { SubjectPublicKeyInfo.CURVE_NAMES[it] ?: it } ?: "(not a named curve)"
                throw refuse("the key is an EC key on curve $curve; only P-256 (prime256v1) is supported")
            }
            val form = info.key.firstOrNull()?.toInt()
            if (!(info.key.size == 65 && form == 0x04) && !(info.key.size == 33 && (form == 0x02 || form == 0x03))) {
                throw refuse("its point is neither an uncompressed (65 bytes) nor a compressed (33 bytes) P-256 point")
            }
            val point = EcdsaP256.uncompressedPoint(info.key) ?: throw refuse("its point is not on the P-256 curve")
            return ModelSigningPublicKey(EcdsaP256.publicKey(point), pem(SubjectPublicKeyInfo.P256_UNCOMPRESSED_PREFIX + point))
        }

        /** The DER of the first PEM block, which must be a `PUBLIC KEY`. */
        private fun publicKeyBlock(text: String): ByteArray {
            val lines = text.split(NEWLINES).filter { it.isNotEmpty() }.map { line ->
                line.trim { it == '\t' || Character.getType(it) == Character.SPACE_SEPARATOR.toInt() }
            }
            val begin = lines.indexOfFirst { it.startsWith("-----BEGIN ") && it.endsWith("-----") && it.length > 16 }
            if (begin < 0) throw refuse("not a PEM file (no -----BEGIN PUBLIC KEY----- line)")
            val label = lines[begin].removePrefix("-----BEGIN ").dropLast(5)
            if (label.endsWith("PRIVATE KEY")) {
                throw refuse("this is a private key (${quoted(label)}); a device needs only the public key (PEM PUBLIC KEY)")
            }
            if (label != "PUBLIC KEY") throw refuse("holds a PEM ${quoted(label)}, not a PUBLIC KEY")
            val end = lines.subList(begin, lines.size).indexOf("-----END PUBLIC KEY-----")
            if (end < 0) throw refuse("the PEM PUBLIC KEY has no -----END PUBLIC KEY----- line")
            val der = decodeBase64(lines.subList(begin + 1, begin + end).joinToString(""))
            if (der == null || der.isEmpty()) throw refuse("the PEM PUBLIC KEY's body is not base64")
            return der
        }

        /** A SubjectPublicKeyInfo as PEM: 64-column base64 lines, trailing newline. */
        private fun pem(der: ByteArray): String =
            "-----BEGIN PUBLIC KEY-----\n" + encodeBase64(der).chunked(64).joinToString("\n") + "\n-----END PUBLIC KEY-----\n"

        private fun refuse(reason: String) = ClientError.InvalidModelSigningKey(reason)
    }
}
