package dev.modelcast.client

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.io.File

/**
 * Under a key set, a manifest is proven by its manifest threshold of signatures wherever
 * modelcast puts them: the inline member (over the manifest without it), `.minisig` and
 * `.sigs` (over the bytes as served), and, when a publish stopped between its signature
 * writes and its manifest write left the next release's signatures beside the live
 * manifest, the ones its release kept beside its history record
 * (`manifests/N.json.minisig` and `manifests/N.json.sigs`), as a device with pinned keys is
 * ([dev.modelcast.client.trust.ManifestSignatureCheck]). The Swift client's
 * KeySetKeptSignatureTests, against a site the real CLI wrote ([KeySetSite]).
 */
class KeySetKeptSignatureTest {
    /** `keys create`: roots R1, R2 (threshold 2); manifest keys K1, K2 (threshold 2). */
    private fun twoOfTwo(): KeySetSite = KeySetSite.start().also { site ->
        site.createKeySet(listOf(site.k1, site.k2), manifestThreshold = 2)
    }

    @Test
    fun aManifestBesideTheNextReleasesSignaturesIsProvenByTheSignaturesItsReleaseKept() = twoOfTwo().use { site ->
        site.publish("1.0.0", site.k1, site.k2)
        val release1 = File(site.root, "manifest.json").readBytes()
        val ahead = site.device("ahead")
        site.publish("1.0.1", site.k1, site.k2)
        assertEquals(UpdateOutcome.Updated(2, mapOf("m" to "1.0.1")), ahead.updateBlocking())

        // The window a stopped publish leaves: release 1's manifest, release 2's .minisig and .sigs.
        File(site.root, "manifest.json").writeBytes(release1)
        val fresh = site.device("fresh")
        assertEquals(UpdateOutcome.Updated(1, mapOf("m" to "1.0.0")), fresh.updateBlocking())
        assertTrue(site.server.requests.containsAll(listOf("/site/manifests/00000001.json.minisig 200", "/site/manifests/00000001.json.sigs 200")),
            "${site.server.requests}")

        // The sequence still never goes back.
        val replayed = assertRaises<ClientError.Replayed> { ahead.updateBlocking() }
        assertEquals(1L, replayed.sequence)
        assertEquals(2L, replayed.highestAccepted)
        assertEquals("1.0.1", ahead.installed("m")?.version)

        // Kept signatures below the threshold (the kept list holds K1's alone) prove nothing:
        // refused, naming the live failure and the kept one's.
        val keptList = File(site.root, "manifests/00000001.json.sigs")
        File(site.root, "manifests/00000001.json.minisig").copyTo(keptList, overwrite = true)
        val short = assertRaises<ClientError.ManifestThresholdNotMet> { site.device("short").updateBlocking() }
        assertEquals(1L, short.keySetVersion)
        assertTrue(short.reason.contains("the signatures kept for sequence 1"), short.reason)
        assertTrue(short.reason.contains("do not prove it either"), short.reason)
        assertEquals(ClientError.Kind.REFUSED, short.kind)
        assertEquals(emptyList<String>(), site.models("short"), "nothing installed")

        // No kept signatures at all: refused, naming what the server answered.
        assertTrue(keptList.delete() && File(site.root, "manifests/00000001.json.minisig").delete())
        val none = assertRaises<ClientError.ManifestThresholdNotMet> { site.device("none").updateBlocking() }
        assertTrue(none.reason.contains("are not there (HTTP 404, 404)"), none.reason)
        assertEquals(emptyList<String>(), site.models("none"), "nothing installed")
    }

    /**
     * `publish --inline-signature --sign K1 --sign K2`: the inline member is K1's over the
     * manifest without it; `.minisig` (K1's) and `.sigs` (K1's and K2's) are over the bytes as
     * served (what `minisign -V` checks). Both count, each key once.
     */
    @Test
    fun anInlineSignatureCountsBesideTheSignatureList() = twoOfTwo().use { site ->
        site.publish("1.0.0", site.k1, site.k2, inline = true)
        assertEquals(UpdateOutcome.Updated(1, mapOf("m" to "1.0.0")), site.device("a").updateBlocking())

        // The list's entries (4 lines each): K1's is the .minisig's, the other is K2's.
        val minisig = File(site.root, "manifest.json.minisig")
        val list = File(site.root, "manifest.json.sigs")
        val entries = list.readLines().chunked(4).map { it.joinToString("\n", postfix = "\n") }
        val k1Entry = minisig.readText()
        val k2Entry = entries.single { it != k1Entry }
        assertTrue(minisig.delete())

        // K1 inline, K2 in the list alone: two keys, accepted.
        list.writeText(k2Entry)
        assertEquals(UpdateOutcome.Updated(1, mapOf("m" to "1.0.0")), site.device("b").updateBlocking(), "K1 inline and K2 in the list")

        // K1 inline and K1 in the list: one key, refused.
        list.writeText(k1Entry)
        val short = assertRaises<ClientError.ManifestThresholdNotMet> { site.device("short").updateBlocking() }
        assertEquals(1L, short.keySetVersion)
        assertTrue(short.reason.contains("signed by 1 of"), short.reason)
        assertEquals(emptyList<String>(), site.models("short"), "nothing installed")
    }
}
