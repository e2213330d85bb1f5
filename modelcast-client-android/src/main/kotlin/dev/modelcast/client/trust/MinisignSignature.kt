package dev.modelcast.client.trust

/**
 * A minisign signature (`.minisig` file):
 *
 *     untrusted comment: <text>
 *     <base64 of algorithm (2) ‖ key id (8) ‖ Ed25519 signature (64)>
 *     trusted comment: <text>
 *     <base64 of the global signature (64)>
 *
 * With algorithm `ED` (minisign 0.11's default, what modelcast writes) the signature is
 * Ed25519 over the BLAKE2b-512 of the message; with legacy `Ed` it is Ed25519 over the
 * message itself. The global signature is Ed25519 over signature ‖ trusted comment, which
 * is how the trusted comment is protected.
 */
class MinisignSignature private constructor(
    /** How the message was signed. */
    val algorithm: Algorithm,
    /** The id of the key that made the signature. */
    val keyId: MinisignKeyId,
    private val signatureBytes: ByteArray,
    /** The first line's comment; anyone can change it without detection. */
    val untrustedComment: String,
    /** The third line's comment, protected by [globalSignature]. */
    val trustedComment: String,
    private val globalSignatureBytes: ByteArray
) {
    /** How the message was signed. */
    enum class Algorithm(val bytes: String) {
        /** `ED`: Ed25519 over BLAKE2b-512(message); what minisign 0.11 and modelcast write. */
        PREHASHED("ED"),
        /** `Ed`: Ed25519 over the message itself (minisign before 0.8, or `-l`). */
        LEGACY("Ed")
    }

    /** The 64-byte Ed25519 signature over the message or its BLAKE2b-512 (a copy). */
    val signature: ByteArray get() = signatureBytes.copyOf()
    /** The 64-byte Ed25519 signature over [signature] ‖ [trustedComment] (a copy). */
    val globalSignature: ByteArray get() = globalSignatureBytes.copyOf()

    /** The signature file's text, exactly as minisign writes it. */
    val fileContents: String
        get() {
            val structure = algorithm.bytes.toByteArray(Charsets.US_ASCII) + keyId.bytes + signatureBytes
            return "$UNTRUSTED_COMMENT_PREFIX$untrustedComment\n${encodeBase64(structure)}\n" +
                "$TRUSTED_COMMENT_PREFIX$trustedComment\n${encodeBase64(globalSignatureBytes)}\n"
        }

    /**
     * Verifies this signature over [message] with the trusted key whose key id it names, then
     * the trusted comment's signature, like `minisign -V -H`. Two trusted keys may share an
     * id (8 random bytes): the one whose signature verifies is the signer. [source] names the
     * signature in errors.
     *
     * Throws [TrustError.LegacySignatureRefused] for a legacy `Ed` signature unless
     * [allowLegacy] (a client never allows it; false by default, unlike the Swift server
     * code), [TrustError.UntrustedSigningKey] when no key in [publicKeys] has the key id,
     * [TrustError.SignatureMismatch] when the message (or the signature) was altered, and
     * [TrustError.TrustedCommentMismatch] when the trusted comment was.
     */
    fun verify(
        message: ByteArray,
        publicKeys: List<MinisignPublicKey>,
        source: String = "signature",
        allowLegacy: Boolean = false
    ): VerifiedSignature = verify(message, publicKeys, source, allowLegacy) { Blake2b.hash(message) }

    /**
     * [verify] with the message's BLAKE2b-512 from [prehash], so a caller checking several
     * signatures over one message (a key set's or a threshold manifest's) hashes it once.
     */
    internal fun verify(
        message: ByteArray,
        publicKeys: List<MinisignPublicKey>,
        source: String,
        allowLegacy: Boolean,
        prehash: () -> ByteArray
    ): VerifiedSignature {
        if (algorithm == Algorithm.LEGACY && !allowLegacy) throw TrustError.LegacySignatureRefused(source)
        val candidates = publicKeys.filter { it.keyId == keyId }
        if (candidates.isEmpty()) throw TrustError.UntrustedSigningKey(source, keyId.hex, publicKeys.map { it.keyId.hex })
        val signed = if (algorithm == Algorithm.PREHASHED) prehash() else message
        val publicKey = candidates.firstOrNull { it.verifies(signatureBytes, signed) }
            ?: throw TrustError.SignatureMismatch(source, keyId.hex)
        if (!publicKey.verifies(globalSignatureBytes, signatureBytes + trustedComment.toByteArray(Charsets.UTF_8))) {
            throw TrustError.TrustedCommentMismatch(source, keyId.hex)
        }
        return VerifiedSignature(publicKey, algorithm, trustedComment, untrustedComment)
    }

    companion object {
        private val LINE_NAMES = listOf("untrusted comment", "signature", "trusted comment", "trusted comment signature")

        /**
         * Parses a signature file's text (decoded as UTF-8). [source] names the file (a path
         * or URL) in errors, which also name the offending line. Exactly four lines: stock
         * minisign ignores a fifth, modelcast clients refuse it. Throws
         * [TrustError.MalformedSignature] and [TrustError.UnsupportedSignatureAlgorithm].
         */
        fun parse(fileContents: String, source: String = "signature"): MinisignSignature {
            val lines = minisignLines(fileContents)
            fun malformed(line: Int, problem: String) =
                TrustError.MalformedSignature(source, "line $line (${LINE_NAMES[line - 1]}): $problem")
            if (lines.size < 4) {
                if (lines.isEmpty()) throw TrustError.MalformedSignature(source, "the file is empty")
                throw TrustError.MalformedSignature(source, "the file ends after line ${lines.size}; line ${lines.size + 1} " +
                    "(${LINE_NAMES[lines.size]}) is missing (a minisign signature has 4 lines)")
            }
            if (lines.size != 4) {
                throw TrustError.MalformedSignature(source, "line 5: unexpected text after the trusted comment signature (a minisign signature has 4 lines)")
            }
            lines.forEachIndexed { index, line -> if (line.contains('\r')) throw malformed(index + 1, "contains a carriage return") }
            val untrusted = textAfterPrefix(UNTRUSTED_COMMENT_PREFIX, lines[0])
                ?: throw malformed(1, "must start with \"$UNTRUSTED_COMMENT_PREFIX\"")
            val structure = decodeBase64(lines[1]) ?: throw malformed(2, "not valid base64")
            if (structure.size != 74) {
                throw malformed(2, "decodes to ${structure.size} bytes; a signature line decodes to 74 (algorithm, key id, signature)")
            }
            val trusted = textAfterPrefix(TRUSTED_COMMENT_PREFIX, lines[2])
                ?: throw malformed(3, "must start with \"$TRUSTED_COMMENT_PREFIX\"")
            val global = decodeBase64(lines[3]) ?: throw malformed(4, "not valid base64")
            if (global.size != 64) throw malformed(4, "decodes to ${global.size} bytes; a trusted comment signature decodes to 64")
            val algorithmBytes = structure.copyOfRange(0, 2)
            val algorithm = Algorithm.values().firstOrNull { it.bytes.toByteArray(Charsets.US_ASCII).contentEquals(algorithmBytes) }
                ?: throw TrustError.UnsupportedSignatureAlgorithm(source, describeAlgorithm(algorithmBytes))
            return MinisignSignature(
                algorithm, MinisignKeyId.of(structure.copyOfRange(2, 10))!!, structure.copyOfRange(10, 74),
                untrusted, trusted, global
            )
        }
    }
}

/** What a successful [MinisignSignature.verify] established. */
class VerifiedSignature(
    /** The trusted key that made the signature. */
    val publicKey: MinisignPublicKey,
    /** How the message was signed. */
    val algorithm: MinisignSignature.Algorithm,
    /** The trusted comment, now known to come from the key's owner. */
    val trustedComment: String,
    /** The untrusted comment: covered by no signature, for display only. */
    val untrustedComment: String
) {
    /** The signing key's id. */
    val keyId: MinisignKeyId get() = publicKey.keyId
}
