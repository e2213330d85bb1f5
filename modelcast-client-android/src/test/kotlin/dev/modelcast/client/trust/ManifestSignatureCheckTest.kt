package dev.modelcast.client.trust

import dev.modelcast.client.ClientError
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** The order a device proves a manifest in ([ManifestSignatureCheck.prove]), with a fake server. */
class ManifestSignatureCheckTest {
    private val url = "https://cdn.example.com/models/manifest.json"
    private val keys = ManifestSignatureCheck.pinnedKeys(listOf(Vectors.text("minisign/keys/test.pub")), url)
    private val stable = Vectors.bytes("minisign/messages/stable-manifest.json")
    private val stableSignature = Vectors.text("minisign/signatures/stable-manifest.json.minisig")

    /**
     * The test key's signature of the stable manifest with `"sequence": 2`, made with
     * `minisign -S -s keys/test.key` (the vectors' test key): beside the sequence-1 manifest it
     * is what a publish stopped between its two writes leaves.
     */
    private val sequence2Signature = "untrusted comment: signature from minisign secret key\nRUSSru3AKSo8uXH7vywwQaN0nXFK4yckzFEwHM8HrzOjI+dXK6PwhFdyR0I7WKBs1l8M3aHn+nffIS+XK+HBKIUOtHwMmIxa0gs=\ntrusted comment: timestamp:1767225700\tfile:manifest.json\tsequence:2\tversion:1.0.0\texpires:2125-08-30T00:00:00Z\nTlhQRA+1twJjnj6dkDqNOAOsFUBbZSQXWH/hd2JdvYyILQz7vKJWnagZL440sn/kqNKXjb5DtIgyI5tpsIcrCg==\n"

    /** The server: signature URLs to their text (absent: 404); every URL asked is recorded. */
    private class Server(val files: Map<String, String>, val failing: Set<String> = emptySet()) {
        val asked = ArrayList<String>()
        fun fetch(url: String): String? {
            asked.add(url)
            if (url in failing) throw ClientError.Http(url, 503)
            return files[url]
        }
    }

    private fun decode(bytes: ByteArray): Map<String, Any?> = TestJson.parse(String(bytes, Charsets.UTF_8)).obj()
    private fun facts(release: Map<String, Any?>) = ManifestSignatureCheck.ManifestFacts(release["sequence"] as Long?, release["expires_at"] as String?)

    private fun prove(data: ByteArray, server: Server, channel: String = "stable", at: String = url, pinned: List<MinisignPublicKey> = keys) =
        ManifestSignatureCheck.prove(data, at, channel, pinned, ::decode, ::facts, server::fetch)

    @Test
    fun withoutKeysTheManifestIsTakenAsItIs() {
        val proven = prove(stable, Server(emptyMap()), pinned = emptyList())
        assertEquals(1L, proven.release["sequence"])
        assertNull(proven.comment)
    }

    @Test
    fun aDetachedSignatureProvesTheManifest() {
        val server = Server(mapOf("$url.minisig" to stableSignature))
        val proven = prove(stable, server)
        assertEquals(1L, proven.comment!!.sequence)
        assertEquals(listOf("$url.minisig"), server.asked)
    }

    @Test
    fun noSignatureIsUnsigned() {
        assertThrows(ClientError.Unsigned::class.java) { prove(stable, Server(emptyMap())) }
    }

    @Test
    fun anotherChannelsSignatureIsRefusedWithoutLookingFurther() {
        val beta = Vectors.bytes("minisign/messages/beta-manifest.json")
        val server = Server(mapOf("$url.minisig" to Vectors.text("minisign/signatures/beta-manifest.json.minisig")))
        val error = assertThrows(ClientError.BadSignature::class.java) { prove(beta, server) }
        assertEquals("the signature is for 'channels/beta/manifest.json', not manifest.json", error.reason)
        assertEquals(1, server.asked.size)
        // Served at beta's URL, it proves the beta manifest.
        val betaUrl = "https://cdn.example.com/models/channels/beta/manifest.json"
        val atBeta = Server(mapOf("$betaUrl.minisig" to Vectors.text("minisign/signatures/beta-manifest.json.minisig")))
        assertEquals("channels/beta/manifest.json", prove(beta, atBeta, "beta", betaUrl).comment!!.file)
    }

    @Test
    fun theNextReleasesSignatureSendsTheDeviceToTheKeptOne() {
        val kept = "https://cdn.example.com/models/manifests/00000001.json.minisig"
        val server = Server(mapOf("$url.minisig" to sequence2Signature, kept to stableSignature))
        val proven = prove(stable, server)
        assertEquals(1L, proven.comment!!.sequence)
        assertEquals(listOf("$url.minisig", kept), server.asked)
    }

    @Test
    fun whyTheKeptSignatureDidNotHelpIsSaid() {
        val kept = "https://cdn.example.com/models/manifests/00000001.json.minisig"
        val live = "signature $url (key id B93C2A29C0EDAE92) does not verify: the signed data was altered or the signature is for other data"
        fun reason(server: Server) = assertThrows(ClientError.BadSignature::class.java) { prove(stable, server) }.reason
        assertEquals("$live; the signature kept for sequence 1, $kept, is not there (HTTP 404)",
            reason(Server(mapOf("$url.minisig" to sequence2Signature))))
        assertEquals("$live; the signature kept for sequence 1, $kept, could not be read: $kept: HTTP 503",
            reason(Server(mapOf("$url.minisig" to sequence2Signature), failing = setOf(kept))))
        assertTrue(reason(Server(mapOf("$url.minisig" to sequence2Signature, kept to sequence2Signature)))
            .startsWith("$live; the signature kept for sequence 1, $kept, does not prove it either: signature $kept (key id"))
        // Not laid out as modelcast writes a target: nothing is looked for.
        val odd = "https://cdn.example.com/manifest"
        val error = assertThrows(ClientError.BadSignature::class.java) { prove(stable, Server(mapOf("$odd.minisig" to sequence2Signature)), at = odd) }
        assertTrue(error.reason.endsWith("; no kept signature was looked for: the manifest URL's path does not end in a .json file, " +
            "so it is not laid out as modelcast writes a target"), error.reason)
    }

    @Test
    fun anInlineSignatureIsCheckedOverTheManifestWithoutIt() {
        val lines = stableSignature.split("\n")
        val member = "{\n    \"format\": \"minisign\",\n    \"signature\": \"${lines[1]}\",\n" +
            "    \"trusted_comment\": \"${lines[2].removePrefix("trusted comment: ").replace("\t", "\\t")}\",\n" +
            "    \"global_signature\": \"${lines[3]}\"\n  }"
        val text = String(stable, Charsets.UTF_8)
        val inline = (text.removeSuffix("\n}\n") + ",\n  \"signature\": " + member + "\n}\n").toByteArray()
        val server = Server(emptyMap())
        val proven = prove(inline, server)
        assertEquals(1L, proven.comment!!.sequence)
        assertEquals(emptyList<String>(), server.asked)
        assertTrue(InlineSignature.split(inline)!!.signed.contentEquals(stable))
        // The signed part altered: refused, and no detached signature is fetched instead.
        val altered = String(inline, Charsets.UTF_8).replace("\"size\": 2000", "\"size\": 2001").toByteArray()
        assertThrows(ClientError.BadSignature::class.java) { prove(altered, server) }
        val broken = String(inline, Charsets.UTF_8).replace("\"format\": \"minisign\"", "\"format\": \"other\"").toByteArray()
        assertEquals("inline signature: format is not \"minisign\"", assertThrows(ClientError.BadSignature::class.java) { prove(broken, server) }.reason)
        assertEquals(emptyList<String>(), server.asked)
    }

    @Test
    fun aConfiguredKeyThatIsNoKeyIsNamed() {
        val error = assertThrows(ClientError.BadSignature::class.java) {
            ManifestSignatureCheck.pinnedKeys(listOf(keys[0].base64, "untrusted comment: x\nnot a key"), url)
        }
        assertEquals("minisign key configured public key 2 ('untrusted comment: x not a key'): line 2: not valid base64", error.reason)
        assertTrue(error.cause is TrustError.SigningKey)
    }

    @Test
    fun aCommentModelcastDidNotWriteIsRefused() {
        // minisign's default trusted comment (`minisign -S -s keys/test.key -m hello.txt`): signed, but it binds no sequence.
        val byMinisign = "untrusted comment: signature from minisign secret key\nRUSSru3AKSo8uZ7WW+Qk2pyLbtTe5wffMSRhiOiQSz5C3Xp2lRw8872/QH19UAiDFT4rpjFMw5OO8kQeOHQUErFnsGm36U0UfAA=\ntrusted comment: timestamp:1795935089\tfile:hello.txt\thashed\nXlIDRyNyPgtRiDIZOl0Im+l3xSQ3Gz6rsIjQXMU5RSOYTuQuxcVpq+nHaiKgZ51wr9CJjeR4VWz4bzevgFXRCw==\n"
        val error = assertThrows(ClientError.BadSignature::class.java) {
            ManifestSignatureCheck.verify(byMinisign, Vectors.bytes("minisign/messages/hello.txt"), keys, url)
        }
        assertEquals("the trusted comment is not modelcast's (it binds no sequence): 'timestamp:1795935089\\u{9}file:hello.txt\\u{9}hashed'", error.reason)
        // An altered comment fails on its signature before its form is read.
        val altered = byMinisign.replace("hashed", "sequence:1")
        assertTrue(assertThrows(ClientError.BadSignature::class.java) {
            ManifestSignatureCheck.verify(altered, Vectors.bytes("minisign/messages/hello.txt"), keys, url)
        }.cause is TrustError.TrustedCommentMismatch)
    }

    @Test
    fun theManifestNameComesFromTheUrl() {
        val comment = TrustedComment.parse("timestamp:1\tfile:channels/beta/models.json\tsequence:3\tversion:1\texpires:never")!!
        ManifestSignatureCheck.bind(comment, 3, null, "beta", "https://h/x/channels/beta/models.json?token=a%20b")
        val error = assertThrows(ClientError.BadSignature::class.java) {
            ManifestSignatureCheck.bind(comment, 3, null, "beta", "https://h/x/channels/beta/manifest.json")
        }
        assertEquals("the signature is for 'channels/beta/models.json', not channels/beta/manifest.json", error.reason)
        assertEquals("the manifest says sequence 4, its signature says 3", assertThrows(ClientError.BadSignature::class.java) {
            ManifestSignatureCheck.bind(comment, 4, null, "beta", "https://h/x/channels/beta/models.json")
        }.reason)
    }

    @Test
    fun theDetachedSignatureKeepsTheQuery() {
        assertEquals("https://h/m.json.minisig?token=1", ManifestSignatureCheck.signatureUrl("https://h/m.json?token=1"))
        assertEquals("https://h/a%20b/m.json.minisig", ManifestSignatureCheck.signatureUrl("https://h/a%20b/m.json#top"))
    }
}
