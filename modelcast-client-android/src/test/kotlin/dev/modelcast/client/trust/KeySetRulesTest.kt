package dev.modelcast.client.trust

import dev.modelcast.client.format.ManifestValueException
import dev.modelcast.client.format.Timestamp
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/**
 * The key set rules the vectors do not reach one by one: each strict JSON rule (the field a
 * refusal names and why), the bounds at their edges, the signature list's errors, expiry at
 * the second, and the floor reset without a floor for the channel. Documents are the rotation
 * vector's key set 2 with one change each.
 */
class KeySetRulesTest {
    private val document = Vectors.text("keyset/cases/rotation/keys/2.json")

    private fun refusal(bytes: ByteArray): ManifestValueException = assertThrows(ManifestValueException::class.java) { KeySet.parse(bytes) }

    /** The refusal of the document with [old] replaced by [new] (which must be there). */
    private fun refusal(old: String, new: String): ManifestValueException {
        assertTrue(document.contains(old), old)
        return refusal(document.replaceFirst(old, new).toByteArray(Charsets.UTF_8))
    }

    private fun assertRefused(field: String, reasonPart: String, error: ManifestValueException) {
        assertEquals(field, error.field, error.message)
        assertTrue(error.reason.contains(reasonPart), error.message)
    }

    @Test
    fun theBaseDocumentParses() {
        val keySet = KeySet.parse(document.toByteArray())
        assertEquals(2L, keySet.version)
        assertEquals(41L, keySet.sequenceFloor("stable"))
        assertEquals(57L, keySet.sequenceFloor("beta"))
        assertEquals(0L, keySet.sequenceFloor("nightly"), "a channel the document names no floor for")
        assertEquals("2027-11-29T00:00:00Z", keySet.expiresAtText)
    }

    @Test
    fun aRepeatedMemberIsNamedByItsOwnPath() {
        assertRefused("root.threshold", "appears twice", refusal("\"root\": {\n", "\"root\": {\n    \"threshold\": 1,\n"))
        assertRefused("version", "appears twice", refusal("\"version\": 2", "\"version\": 2, \"version\": 3"))
    }

    @Test
    fun integersAreWrittenAsIntegers() {
        assertRefused("version", "fraction or exponent", refusal("\"version\": 2", "\"version\": 2e0"))
        assertRefused("version", "fraction or exponent", refusal("\"version\": 2", "\"version\": 2.0"))
        assertRefused("root.threshold", "fraction or exponent", refusal("\"threshold\": 2", "\"threshold\": 20E-1"))
        assertRefused("version", "leading zero", refusal("\"version\": 2", "\"version\": 02"))
        assertRefused("sequence_floors.stable", "fraction or exponent", refusal("\"stable\": 41", "\"stable\": null"))
        assertRefused("sequence_floors.stable", "fraction or exponent", refusal("\"stable\": 41", "\"stable\": 99999999999999999999"))
        val floorsAsANumber = document.replace(Regex("\"sequence_floors\": \\{[^}]*\\}"), "\"sequence_floors\": 41")
        assertRefused("sequence_floors", "not an object", refusal(floorsAsANumber.toByteArray(Charsets.UTF_8)))
    }

    @Test
    fun bytesThatAreNotUtf8OrStartWithAByteOrderMarkAreRefused() {
        val bytes = document.toByteArray()
        val at = document.indexOf("modelcast-keys")
        for (bad in listOf(byteArrayOf(0xC3.toByte(), 0x28), byteArrayOf(0xC0.toByte(), 0xAF.toByte()), byteArrayOf(0xED.toByte(), 0xA0.toByte(), 0x80.toByte()))) {
            assertRefused("(document)", "not UTF-8", refusal(bytes.copyOfRange(0, at) + bad + bytes.copyOfRange(at, bytes.size)))
        }
        assertRefused("(document)", "byte-order mark", refusal(byteArrayOf(0xEF.toByte(), 0xBB.toByte(), 0xBF.toByte()) + bytes))
    }

    @Test
    fun stringsHoldNoLoneSurrogateNorRawControlCharacter() {
        assertRefused("format", "lone surrogate", refusal("\"modelcast-keys\"", "\"\\ud800modelcast-keys\""))
        assertRefused("format", "lone surrogate", refusal("\"modelcast-keys\"", "\"\\udc00modelcast-keys\""))
        assertRefused("format", "control character", refusal("\"modelcast-keys\"", "\"modelcast\tkeys\""))
    }

    @Test
    fun nestingStopsAtEightLevels() {
        // The document is level 1: seven arrays inside it are 8 levels (read, then refused as an
        // unknown field); eight are 9 (refused as too deep, before any field is looked at).
        assertRefused("x", "not a field", refusal("{\n", "{\"x\": [[[[[[[1]]]]]]],\n"))
        assertRefused("x[0][0][0][0][0][0][0]", "deeper than 8", refusal("{\n", "{\"x\": [[[[[[[[1]]]]]]]],\n"))
    }

    @Test
    fun nothingFollowsTheValue() {
        assertRefused("(document)", "is not JSON", refusal("}\n", "}\n{}"))
        assertRefused("(document)", "is not JSON", refusal("}\n", "},\n"))
    }

    @Test
    fun theDocumentIsAtMost64KiB() {
        val padded = document.trimEnd('\n') + " ".repeat(KeySet.MAX_BYTES - document.length) + "\n"
        assertEquals(KeySet.MAX_BYTES, padded.length)
        assertEquals(2L, KeySet.parse(padded.toByteArray()).version)
        assertRefused("(document)", "more than a key set may have", refusal((padded + " ").toByteArray()))
    }

    @Test
    fun valuesKeepToTheirRanges() {
        assertRefused("version", "1 to 2^53", refusal("\"version\": 2", "\"version\": 0"))
        assertRefused("version", "1 to 2^53", refusal("\"version\": 2", "\"version\": 9007199254740993"))
        assertEquals(1L shl 53, KeySet.parse(document.replace("\"version\": 2", "\"version\": 9007199254740992").toByteArray()).version)
        assertRefused("sequence_floors.stable", "0 to 2^53", refusal("\"stable\": 41", "\"stable\": -1"))
        assertRefused("sequence_floors", "not a channel name", refusal("\"stable\": 41", "\"Stable\\u001b[2J\": 41"))
        val many = (0..64).joinToString(", ") { "\"c$it\": 1" }
        assertRefused("sequence_floors", "more than 64", refusal("\"stable\": 41", many))
        assertRefused("expires_at", "whole seconds", refusal("2027-11-29T00:00:00Z", "2027-11-29T00:00:00.5Z"))
        assertRefused("expires_at", "whole seconds", refusal("2027-11-29T00:00:00Z", "2027-11-29T01:00:00+01:00"))
        assertRefused("expires_at", "whole seconds", refusal("2027-11-29T00:00:00Z", "2027-11-29t00:00:00z"))
        assertRefused("format_version", "does not know", refusal("\"format_version\": 1", "\"format_version\": 2"))
        assertRefused("root.threshold", "is required", refusal(",\n    \"threshold\": 2", ""))
        assertRefused("root.keys", "1 to 16", refusal("\"RWTMT/GwABbbXi48gSRQ7RSMxL0k+IUbHyoFwNi8O9WYcVJRqF+iN5JK\",\n      \"RWRysI3RrZ2Ud/3h11z3cRrzNd0BRAsvddsppVZF0Z6ne5/MPWxo1sRw\"", ""))
    }

    @Test
    fun aKeyHasOneSpellingAndOneEntry() {
        val root1 = "RWTMT/GwABbbXi48gSRQ7RSMxL0k+IUbHyoFwNi8O9WYcVJRqF+iN5JK"
        assertRefused("root.keys[0]", "as minisign writes", refusal("\"$root1\"", "\" $root1\""))
        assertRefused("root.keys[0]", "not a minisign public key", refusal("\"$root1\"", "\"${root1.drop(4)}\""))
        // Root key 1's bytes under another key id: one secret would count as two signers.
        val bytes = java.util.Base64.getDecoder().decode(root1)
        for (index in 2 until 10) bytes[index] = (bytes[index] + 1).toByte()
        val sameKeyOtherId = java.util.Base64.getEncoder().encodeToString(bytes)
        assertRefused("root.keys[1]", "repeats root.keys[0]",
            refusal("\"RWRysI3RrZ2Ud/3h11z3cRrzNd0BRAsvddsppVZF0Z6ne5/MPWxo1sRw\"", "\"$sameKeyOtherId\""))
    }

    @Test
    fun aSignatureListNamesItselfAndTheSignatureAtFault() {
        val sigs = Vectors.text("keyset/cases/rotation/keys/2.json.sigs")
        assertEquals(2, MinisignSignatureList.parse(sigs.toByteArray(), "keys/2.json.sigs").signatures.size)
        assertEquals(2, MinisignSignatureList.parse(sigs.replace("\n", "\r\n").toByteArray(), "keys/2.json.sigs").signatures.size)
        val lines = sigs.trimEnd('\n').split('\n')
        fun refused(text: String) =
            assertThrows(TrustError.MalformedSignature::class.java) { MinisignSignatureList.parse(text.toByteArray(), "keys/2.json.sigs") }
        // A line of signature 2 that is not base64.
        val broken = refused((lines.take(5) + listOf("not base64!") + lines.drop(6)).joinToString("\n") + "\n")
        assertEquals("keys/2.json.sigs", broken.source)
        assertTrue(broken.reason.startsWith("signature 2 (lines 5–8): line 2"), broken.reason)
        // An unknown algorithm is a malformed list too (one error type for a list).
        val unknown = java.util.Base64.getDecoder().decode(lines[5]).also { it[0] = 0x58 /* 'X' */ }
        val algorithm = refused((lines.take(5) + listOf(java.util.Base64.getEncoder().encodeToString(unknown)) + lines.drop(6)).joinToString("\n"))
        assertTrue(algorithm.reason.contains("'XD'"), algorithm.reason)
        // A blank line between two signatures shifts every line after it.
        assertTrue(refused((lines.take(4) + "" + lines.drop(4)).joinToString("\n")).reason.contains("9 lines"))
        assertTrue(refused("").reason.contains("no signature"))
        assertTrue(refused(sigs.repeat(9)).reason.contains("18 signatures"))
    }

    @Test
    fun theNewestKeySetExpiresAtItsSecond() {
        val keySet = KeySet.parse(document.toByteArray())
        val expiry = Timestamp.parse("2027-11-29T00:00:00Z")!!
        keySet.checkFresh(expiry.minusSeconds(1))
        val error = assertThrows(KeySetError.Expired::class.java) { keySet.checkFresh(expiry) }
        assertEquals("keys/2.json", error.path)
    }

    @Test
    fun theFloorResetsOnlyWhenAManifestKeyGoes() {
        val trusted = KeySet.parse(Vectors.bytes("keyset/cases/rotation/trusted.json"))
        val next = KeySet.parse(document.toByteArray())
        val k1 = trusted.manifest.keys[0]
        val k2 = next.manifest.keys[0]
        fun withManifest(keys: List<MinisignPublicKey>, floor: Long?) =
            KeySet(2, next.expiresAt, next.root, KeySetRole(keys, 1, "manifest"), floor?.let { mapOf("stable" to it) } ?: emptyMap())
        assertEquals(41L, KeySetChain.sequenceFloor(trusted, next, "stable"))
        assertEquals(57L, KeySetChain.sequenceFloor(trusted, next, "beta"), "each channel its own floor")
        assertEquals(0L, KeySetChain.sequenceFloor(trusted, next, "nightly"), "a channel with no floor written: 0")
        assertEquals(0L, KeySetChain.sequenceFloor(trusted, withManifest(listOf(k2), null), "stable"), "K1 removed, no floor written: 0")
        assertNull(KeySetChain.sequenceFloor(trusted, withManifest(listOf(k1, k2), 41), "stable"), "K2 added: the floor is kept")
        assertNull(KeySetChain.sequenceFloor(trusted, withManifest(listOf(k1), 41), "stable"), "nothing removed")
    }

    @Test
    fun aManifestKeyIsNeverARootKey() {
        val next = KeySet.parse(document.toByteArray())
        val error = assertThrows(ManifestValueException::class.java) {
            KeySet(2, next.expiresAt, next.root, KeySetRole(listOf(next.manifest.keys[0], next.root.keys[1]), 1, "manifest"))
        }
        assertEquals("manifest.keys[1]", error.field)
    }
}
