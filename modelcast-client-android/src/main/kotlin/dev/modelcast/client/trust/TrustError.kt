package dev.modelcast.client.trust

import dev.modelcast.client.quoted

/**
 * Why a signature, key or model signature bundle was refused, at the level of the formats
 * (the Swift client's `ModelCastError` cases for them). The client layer
 * ([ManifestSignatureCheck], [ModelSignatureCheck]) reports them as the shared
 * [dev.modelcast.client.ClientError] with the URL or model, as the Swift client does; these
 * typed cases let callers and the conformance tests tell the refusals apart without reading
 * prose.
 */
sealed class TrustError(message: String) : Exception(message) {
    /** A minisign public key that cannot be read. */
    class SigningKey(val source: String, val reason: String) :
        TrustError("minisign key $source: $reason")

    /** Not a minisign signature file (line count, prefixes, base64, lengths, a CR inside a line). */
    class MalformedSignature(val source: String, val reason: String) :
        TrustError("malformed signature file $source: $reason")

    /** A signature algorithm other than minisign's `ED` and legacy `Ed`. */
    class UnsupportedSignatureAlgorithm(val source: String, val algorithm: String) :
        TrustError("signature $source uses an unsupported algorithm: $algorithm (minisign defines 'ED' and legacy 'Ed')")

    /** A legacy `Ed` signature (Ed25519 over the message itself), refused as `minisign -V -H` refuses it. */
    class LegacySignatureRefused(val source: String) :
        TrustError("signature $source uses an unsupported algorithm: 'Ed' (legacy, not prehashed), which is not accepted here")

    /** No trusted key has the signature's key id. */
    class UntrustedSigningKey(val source: String, val keyId: String, val trustedKeyIds: List<String>) :
        TrustError("signature $source was made with key id $keyId, which is not a trusted key (" +
            (if (trustedKeyIds.isEmpty()) "no public key was given" else "trusted key ids: " + trustedKeyIds.joinToString(", ")) + ")")

    /** A trusted key has the id, but the signature does not verify over the message. */
    class SignatureMismatch(val source: String, val keyId: String) :
        TrustError("signature $source (key id $keyId) does not verify: the signed data was altered or the signature is for other data")

    /** The signature verifies; the trusted comment's signature does not (the comment was altered). */
    class TrustedCommentMismatch(val source: String, val keyId: String) :
        TrustError("signature $source (key id $keyId): the trusted comment's signature does not verify (the trusted comment was altered)")

    /** A manifest's inline `signature` member that does not stand for a minisign signature file. */
    class InvalidInlineSignature(val reason: String) :
        TrustError("inline signature: $reason")

    /**
     * A model signature bundle that is not a key-based bundle modelcast accepts. [field] is
     * the JSON path at fault (`bundle.dsseEnvelope.payload`) when one member is.
     */
    class MalformedModelSignature(val source: String, val field: String?, val reason: String) :
        TrustError("model signature $source: $reason")

    /** The bundle's key hint names another key than the pinned one (refused before verifying). */
    class ModelSignatureUntrustedKey(val source: String, val keyHint: String, val pinnedHint: String) :
        TrustError("model signature $source: it was made with another key: its key hint is ${quoted(keyHint)}, the given public key's is $pinnedHint")

    /** The bundle's signature does not verify with the pinned key. */
    class ModelSignatureDoesNotVerify(val source: String, val pinnedHint: String) :
        TrustError("model signature $source: the signature does not verify with the public key (hint $pinnedHint): the statement was altered or signed by another key")

    /** The signature verifies but the statement it signs breaks a rule; [field] says where (`payload.predicateType`). */
    class InvalidStatement(val source: String, val field: String, val reason: String) :
        TrustError("model signature $source: $reason")
}

/**
 * A value of a model signature bundle or statement that breaks a rule: [field] is its JSON
 * path, [value] the value as shown (quoted, or a description such as `(missing)`). The
 * message reads `field: value rule`, as the Swift client's `ManifestValueError`.
 */
internal class FieldError(val field: String, val value: String, val rule: String) : Exception("$field: $value $rule")
