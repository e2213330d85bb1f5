package dev.modelcast.client.trust

import dev.modelcast.client.format.Json
import dev.modelcast.client.format.JsonException
import dev.modelcast.client.format.JsonValue

/**
 * An OpenSSF model signature made with a key: a Sigstore bundle (v0.3, JSON) holding a DSSE
 * envelope whose payload is the in-toto statement of the model's files, signed with ECDSA
 * P-256 / SHA-256, and the hint of the public key that verifies it. The file
 * `model_signing sign key` writes; see docs/model-signing.md.
 */
class ModelSignatureBundle private constructor(
    /** `verificationMaterial.publicKey.hint`: SHA-256 (hex) of the signer's PEM public key; null when absent or empty. */
    val keyHint: String?,
    private val payloadBytes: ByteArray,
    private val signatureBytes: ByteArray
) {
    /** `dsseEnvelope.payload`, decoded: the statement's JSON bytes, exactly as signed (a copy). */
    val payload: ByteArray get() = payloadBytes.copyOf()
    /** `dsseEnvelope.signatures[0].sig`, decoded: the DER ECDSA signature (a copy). */
    val signature: ByteArray get() = signatureBytes.copyOf()

    /** The bytes the signature covers: the DSSE pre-authentication encoding of the payload. */
    val signedBytes: ByteArray get() = Dsse.preAuthenticationEncoding(Dsse.IN_TOTO_PAYLOAD_TYPE, payloadBytes)

    /**
     * Checks the signature with [key] and returns the statement it signs. Refuses a bundle
     * whose key hint names another key ([TrustError.ModelSignatureUntrustedKey], before
     * verifying), a signature that does not verify ([TrustError.ModelSignatureDoesNotVerify]),
     * and a statement that is malformed or inconsistent ([TrustError.InvalidStatement]).
     * [source] names the bundle in errors.
     */
    fun verifiedStatement(key: ModelSigningPublicKey, source: String): ModelSigningStatement {
        if (keyHint != null && keyHint != key.hint) throw TrustError.ModelSignatureUntrustedKey(source, keyHint, key.hint)
        if (signatureBytes.isEmpty() || !key.isValidSignature(signatureBytes, signedBytes)) {
            throw TrustError.ModelSignatureDoesNotVerify(source, key.hint)
        }
        return try {
            ModelSigningStatement.parse(payloadBytes)
        } catch (error: FieldError) {
            throw TrustError.InvalidStatement(source, error.field, error.message ?: "")
        }
    }

    companion object {
        const val MEDIA_TYPE = "application/vnd.dev.sigstore.bundle.v0.3+json"
        /** The largest bundle read (well over 100,000 files' statement). */
        const val MAXIMUM_SIZE = 32 shl 20
        /** The largest DER signature accepted (ECDSA P-256 needs at most 72 bytes). */
        private const val MAXIMUM_SIGNATURE_SIZE = 256
        /** How deeply a bundle's JSON may nest (it needs 5 levels). */
        private const val MAXIMUM_DEPTH = 8

        /**
         * Parses a bundle file (hostile input): at most [MAXIMUM_SIZE] bytes and 8 levels,
         * only the members a key-based model signature has, each of its type, base64 strict,
         * exactly one signature, no certificate, no transparency log entries. The statement
         * is parsed only after its signature is checked ([verifiedStatement]). Throws
         * [TrustError.MalformedModelSignature] naming the field at fault.
         */
        fun parse(data: ByteArray, source: String): ModelSignatureBundle {
            if (data.size > MAXIMUM_SIZE) {
                throw TrustError.MalformedModelSignature(source, null, "${data.size} bytes is larger than $MAXIMUM_SIZE, so not a model signature")
            }
            return try {
                val json = try {
                    Json.parse(data, MAXIMUM_DEPTH)
                } catch (error: JsonException) {
                    if (error.tooDeep) throw TrustError.MalformedModelSignature(source, "(document)", error.reason)
                    throw TrustError.MalformedModelSignature(source, null, "not JSON (${data.size} bytes: truncated, or not a signature bundle)")
                }
                fromJson(json)
            } catch (error: FieldError) {
                throw TrustError.MalformedModelSignature(source, error.field, error.message ?: "")
            }
        }

        private fun fromJson(json: JsonValue): ModelSignatureBundle {
            val root = BundleFields(json, "bundle", setOf("mediaType", "verificationMaterial", "dsseEnvelope", "messageSignature"))
            root.constant("mediaType", MEDIA_TYPE)
            if (root.has("messageSignature")) {
                throw FieldError(root.path("messageSignature"), "(present)", "is a plain message signature; a model signature is a DSSE envelope")
            }
            val material = root.obj("verificationMaterial",
                setOf("publicKey", "tlogEntries", "certificate", "x509CertificateChain", "timestampVerificationData"))
            for (key in listOf("certificate", "x509CertificateChain")) {
                if (material.has(key)) {
                    throw FieldError(material.path(key), "(present)",
                        "is certificate-based signing, which is not supported: only key-based bundles (publicKey) are")
                }
            }
            if (material.has("tlogEntries") && material.array("tlogEntries", 1024).isNotEmpty()) {
                throw FieldError(material.path("tlogEntries"), "(entries)", "must be empty: a key-based model signature has no transparency log entry")
            }
            val publicKey = material.obj("publicKey", setOf("hint"))
            val hint = if (publicKey.has("hint")) publicKey.string("hint", 128) else null
            val envelope = root.obj("dsseEnvelope", setOf("payload", "payloadType", "signatures"))
            envelope.constant("payloadType", Dsse.IN_TOTO_PAYLOAD_TYPE)
            val signatures = envelope.array("signatures", 16)
            if (signatures.size != 1) {
                throw FieldError(envelope.path("signatures"), "(${signatures.size} entries)", "must have exactly one signature")
            }
            val entry = BundleFields(signatures[0], envelope.path("signatures") + "[0]", setOf("sig", "keyid"))
            if (entry.has("keyid")) entry.string("keyid", 256)
            val payload = envelope.base64("payload", MAXIMUM_SIZE)
            val signature = entry.base64("sig", MAXIMUM_SIGNATURE_SIZE)
            return ModelSignatureBundle(if (hint.isNullOrEmpty()) null else hint, payload, signature)
        }
    }
}

/** Dead Simple Signing Envelope (DSSE v1) pieces a model signature bundle uses. */
object Dsse {
    /** The payload type of an in-toto statement. */
    const val IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json"

    /**
     * The pre-authentication encoding, the bytes a DSSE signature covers:
     * `"DSSEv1" SP len(type) SP type SP len(payload) SP payload`, lengths in ASCII decimal
     * bytes. Binding the type and both lengths means no other envelope signs the same bytes.
     */
    fun preAuthenticationEncoding(payloadType: String, payload: ByteArray): ByteArray {
        val type = payloadType.toByteArray(Charsets.UTF_8)
        return "DSSEv1 ${type.size} ".toByteArray(Charsets.US_ASCII) + type + " ${payload.size} ".toByteArray(Charsets.US_ASCII) + payload
    }
}
