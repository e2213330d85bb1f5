package dev.modelcast.client.trust

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

class InlineSignatureTest {
    @Test
    fun aManifestWithoutOneIsItsOwnSignedBytes() {
        val manifest = Vectors.bytes("minisign/messages/stable-manifest.json")
        assertNull(InlineSignature.split(manifest))
        assertTrue(InlineSignature.strip(manifest).contentEquals(manifest))
    }

    @Test
    fun theCutIsAtTheLastMarker() {
        // A hostile manifest with two top-level signature members: only the last one is the signature.
        val manifest = "{\n  \"a\": 1,\n  \"signature\": \"first\",\n  \"signature\": {\"format\": \"minisign\"}\n}\n"
        val split = InlineSignature.split(manifest.toByteArray())!!
        assertEquals("{\n  \"a\": 1,\n  \"signature\": \"first\"\n}\n", String(split.signed))
        assertEquals("{\"format\": \"minisign\"}", String(split.member))
        // The marker's text inside a string is escaped (no raw newline), so it is no marker.
        val quoted = "{\n  \"note\": \",\\n  \\\"signature\\\": \"\n}\n"
        assertNull(InlineSignature.split(quoted.toByteArray()))
    }

    @Test
    fun theMemberStandsForASignatureFile() {
        val file = InlineSignature.signatureFile(
            "{\"format\": \"minisign\", \"signature\": \"U0lH\", \"trusted_comment\": \"a\\tb\", \"global_signature\": \"R0xP\"}".toByteArray())
        assertEquals("untrusted comment: inline signature\nU0lH\ntrusted comment: a\tb\nR0xP\n", file)
    }

    @Test
    fun aBadMemberIsNamed() {
        fun reason(member: String) = assertThrows(TrustError.InvalidInlineSignature::class.java) { InlineSignature.signatureFile(member.toByteArray()) }.reason
        assertEquals("not valid JSON", reason("{\"format\": "))
        assertEquals("format is not \"minisign\"", reason("[]"))
        assertEquals("signature, trusted_comment and global_signature must all be strings",
            reason("{\"format\": \"minisign\", \"signature\": \"x\", \"trusted_comment\": 1, \"global_signature\": \"y\"}"))
        assertEquals("a field contains a line break",
            reason("{\"format\": \"minisign\", \"signature\": \"x\", \"trusted_comment\": \"c\\nuntrusted\", \"global_signature\": \"y\"}"))
    }
}
