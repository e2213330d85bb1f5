package dev.modelcast.client.trust

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

class MinisignTest {
    private val testKey = MinisignPublicKey.parse(Vectors.text("minisign/keys/test.pub"), "test.pub")
    private val hello = Vectors.bytes("minisign/messages/hello.txt")

    @Test
    fun keyIdsPrintAsMinisignDoes() {
        val id = MinisignKeyId.of(hex("05bd9d253f3078d2"))!!
        assertEquals("D278303F259DBD05", id.hex)
        assertEquals(id, MinisignKeyId.parse("d278303f259dbd05"))
        // One id in sixteen prints shorter: no leading zeros.
        assertEquals("13A0444BCE6A025", MinisignKeyId.parse("013A0444BCE6A025")!!.hex)
        assertNull(MinisignKeyId.parse(""))
        assertNull(MinisignKeyId.parse("12345678901234567"))
        assertNull(MinisignKeyId.parse("+1"))
        assertNull(MinisignKeyId.of(ByteArray(7)))
    }

    @Test
    fun aKeyFileRoundTrips() {
        assertEquals(testKey, MinisignPublicKey.fromFile(testKey.fileContents))
        assertEquals(testKey, MinisignPublicKey.parse("  \t" + testKey.base64 + " \n", "pasted"))
        assertEquals(testKey, MinisignPublicKey.fromFile(testKey.fileContents.replace("\n", "\r\n")))
    }

    @Test
    fun badKeysAreNamed() {
        fun reason(text: String) = assertThrows(TrustError.SigningKey::class.java) { MinisignPublicKey.parse(text, "k") }.reason
        assertEquals("a public key file has 2 lines (an untrusted comment and the base64 key), this one has 3", reason("a\nb\nc\n"))
        assertEquals("line 1 must start with \"untrusted comment: \"", reason("comment: x\n${testKey.base64}\n"))
        assertEquals("line 2: not valid base64", reason("untrusted comment: x\nnot base64!\n"))
        assertEquals("not valid base64", reason("RWQ"))
        assertEquals("a public key decodes to 42 bytes (\"Ed\", key id, key), this decodes to 3", reason("AAAA"))
        val ed25519Key = java.util.Base64.getEncoder().encodeToString("XX".toByteArray() + ByteArray(40))
        assertEquals("unsupported signature algorithm 'XX' (expected 'Ed')", reason(ed25519Key))
        assertEquals("a bare public key is one base64 line; this text has several lines",
            assertThrows(TrustError.SigningKey::class.java) { MinisignPublicKey.fromBase64("a\nb") }.reason)
    }

    @Test
    fun aSignatureFileRoundTrips() {
        val text = Vectors.text("minisign/signatures/hello-by-test.minisig")
        val signature = MinisignSignature.parse(text)
        assertEquals(text, signature.fileContents)
        assertEquals(MinisignSignature.Algorithm.PREHASHED, signature.algorithm)
        assertEquals(testKey.keyId, signature.keyId)
    }

    @Test
    fun malformedFilesNameTheLine() {
        fun reason(path: String) =
            assertThrows(TrustError.MalformedSignature::class.java) { MinisignSignature.parse(Vectors.text("minisign/signatures/$path"), path) }.reason
        assertEquals("the file is empty", reason("malformed-empty.minisig"))
        assertEquals("the file ends after line 3; line 4 (trusted comment signature) is missing (a minisign signature has 4 lines)",
            reason("malformed-three-lines.minisig"))
        assertEquals("line 5: unexpected text after the trusted comment signature (a minisign signature has 4 lines)", reason("malformed-five-lines.minisig"))
        assertTrue(reason("malformed-carriage-return-inside.minisig").endsWith("contains a carriage return"))
        assertEquals("line 2 (signature): decodes to 73 bytes; a signature line decodes to 74 (algorithm, key id, signature)",
            reason("malformed-signature-short.minisig"))
        assertEquals("line 4 (trusted comment signature): decodes to 63 bytes; a trusted comment signature decodes to 64",
            reason("malformed-global-signature-short.minisig"))
        val algorithm = assertThrows(TrustError.UnsupportedSignatureAlgorithm::class.java) {
            MinisignSignature.parse(Vectors.text("minisign/signatures/hello-algorithm-XX.minisig"))
        }
        assertEquals("'XX'", algorithm.algorithm)
    }

    @Test
    fun legacySignaturesVerifyOnlyWhenAllowed() {
        val legacy = MinisignSignature.parse(Vectors.text("minisign/signatures/hello-legacy.minisig"))
        assertEquals(MinisignSignature.Algorithm.LEGACY, legacy.algorithm)
        assertThrows(TrustError.LegacySignatureRefused::class.java) { legacy.verify(hello, listOf(testKey)) }
        // Over the message itself, not its BLAKE2b-512: proves the two paths differ.
        assertEquals(testKey, legacy.verify(hello, listOf(testKey), allowLegacy = true).publicKey)
    }

    @Test
    fun anUntrustedKeyNamesTheTrustedOnes() {
        val byOther = MinisignSignature.parse(Vectors.text("minisign/signatures/hello-by-other.minisig"))
        val error = assertThrows(TrustError.UntrustedSigningKey::class.java) { byOther.verify(hello, listOf(testKey), "hello.minisig") }
        assertEquals("13A0444BCE6A025", error.keyId)
        assertEquals(listOf("B93C2A29C0EDAE92"), error.trustedKeyIds)
        assertEquals("signature hello.minisig was made with key id 13A0444BCE6A025, which is not a trusted key (trusted key ids: B93C2A29C0EDAE92)",
            error.message)
        assertTrue(assertThrows(TrustError.UntrustedSigningKey::class.java) { byOther.verify(hello, emptyList()) }
            .message!!.endsWith("(no public key was given)"))
    }
}
