package dev.modelcast.client.trust

import java.nio.ByteBuffer
import java.nio.charset.CharacterCodingException
import java.nio.charset.CodingErrorAction

/**
 * Several minisign signatures over one file, concatenated in one file: `keys/N.json.sigs`
 * (every root signature of a key set) and `manifest.json.sigs` (every manifest key's
 * signature). Each is the 4 lines of a `.minisig` file (untrusted comment, signature,
 * trusted comment, global signature), one after the other with nothing between them.
 * Holds 1 to [MAX_SIGNATURES] signatures (the Swift client's `MinisignSignatureList`).
 *
 * @throws TrustError.MalformedSignature naming [source] for any other count.
 */
class MinisignSignatureList(signatures: List<MinisignSignature>, source: String = "signature list") {
    /** The signatures, in the file's order. */
    val signatures: List<MinisignSignature> = signatures.toList()

    init {
        if (this.signatures.size !in 1..MAX_SIGNATURES) {
            throw TrustError.MalformedSignature(source, "a signature list holds 1 to $MAX_SIGNATURES signatures, not ${this.signatures.size}")
        }
    }

    /** The file's text: each signature's `.minisig` text, in order. */
    val fileContents: String get() = signatures.joinToString("") { it.fileContents }

    companion object {
        /** The most signatures a list holds. */
        const val MAX_SIGNATURES = 16
        /** The largest list read, in bytes (16 KiB); a larger one is refused unparsed. */
        const val MAX_BYTES = 16 shl 10

        /**
         * Parses a list as served: at most [MAX_BYTES], UTF-8, a multiple of 4 lines (LF or
         * CRLF, trailing empty lines ignored), 1 to [MAX_SIGNATURES] signatures, each read by
         * [MinisignSignature.parse]. Every refusal is a [TrustError.MalformedSignature] whose
         * source is exactly [source] (`keys/2.json.sigs`); its reason names the signature's
         * number and lines.
         */
        @JvmStatic
        fun parse(bytes: ByteArray, source: String): MinisignSignatureList {
            fun malformed(reason: String) = TrustError.MalformedSignature(source, reason)
            if (bytes.size > MAX_BYTES) throw malformed("${bytes.size} bytes, more than a signature list may be ($MAX_BYTES)")
            val text = try {
                Charsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes)).toString()
            } catch (error: CharacterCodingException) {
                throw malformed("not UTF-8 text")
            }
            val lines = minisignLines(text)
            if (lines.isEmpty()) throw malformed("the file holds no signature")
            if (lines.size % 4 != 0) throw malformed("${lines.size} lines: a list of minisign signatures has 4 lines per signature")
            if (lines.size / 4 > MAX_SIGNATURES) throw malformed("${lines.size / 4} signatures, more than a list may hold ($MAX_SIGNATURES)")
            val signatures = (0 until lines.size / 4).map { index ->
                val where = "signature ${index + 1} (lines ${4 * index + 1}–${4 * index + 4})"
                try {
                    MinisignSignature.parse(lines.subList(4 * index, 4 * index + 4).joinToString("\n") + "\n", "$source, $where")
                } catch (error: TrustError.MalformedSignature) {
                    throw malformed("$where: ${error.reason}")
                } catch (error: TrustError.UnsupportedSignatureAlgorithm) {
                    throw malformed("$where: unsupported signature algorithm ${error.algorithm} (minisign defines 'ED' and legacy 'Ed')")
                }
            }
            return MinisignSignatureList(signatures, source)
        }
    }
}
