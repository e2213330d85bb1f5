package dev.modelcast.client.trust

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Test

/** The key layout server and client share, and where a device looks for a kept signature (the Swift TargetKeysTests' cases). */
class TargetKeysTest {
    @Test
    fun keptSignatureKeysFollowTheHistoryLayout() {
        assertEquals("manifests/00000007.json.minisig", TargetKeys.keptSignatureKey("manifest.json", 7))
        assertEquals("manifests/models/00000012.json.minisig", TargetKeys.keptSignatureKey("models.json", 12))
        assertEquals("manifests/channels/beta/00000001.json.minisig", TargetKeys.keptSignatureKey("channels/beta/manifest.json", 1))
        assertEquals("manifests/channels/beta/models/123456789.json.minisig", TargetKeys.keptSignatureKey("channels/beta/models.json", 123_456_789))
        assertEquals("manifests/00000000.json", TargetKeys.historyKey("manifest.json", 0))
        assertEquals("manifests/99999999.json", TargetKeys.historyKey("manifest.json", 99_999_999))
        assertEquals("manifests/100000000.json", TargetKeys.historyKey("manifest.json", 100_000_000))
        assertEquals("manifests/9223372036854775807.json", TargetKeys.historyKey("manifest.json", Long.MAX_VALUE))
    }

    @Test
    fun aManifestUrlIsSplitAtItsTargetsRoot() {
        val cases = listOf(
            Triple("https://cdn.example.com/models/manifest.json", "https://cdn.example.com/models/", "manifest.json"),
            Triple("https://cdn.example.com/models/channels/beta/manifest.json", "https://cdn.example.com/models/", "channels/beta/manifest.json"),
            Triple("/models/channels/beta/models.json", "/models/", "channels/beta/models.json"),
            Triple("/channels/beta/manifest.json", "/", "channels/beta/manifest.json"),
            // Not a channel name: stable's manifest in a folder of its own.
            Triple("/models/channels/Beta_2/manifest.json", "/models/channels/Beta_2/", "manifest.json"),
            Triple("/manifest.json", "/", "manifest.json")
        )
        for ((location, root, key) in cases) assertEquals(Pair(root, key), TargetKeys.splitAtRoot(location), location)
        assertNull(TargetKeys.splitAtRoot("manifest.json"))
    }

    @Test
    fun theKeptSignatureUrlKeepsTheQueryAndDropsTheFragment() {
        assertEquals("https://h/manifests/00000007.json.minisig", KeptSignatureLookup.keptSignatureUrl("https://h/manifest.json", 7))
        assertEquals("https://h/app/manifests/channels/beta/00000002.json.minisig?token=a%20b",
            KeptSignatureLookup.keptSignatureUrl("https://h/app/channels/beta/manifest.json?token=a%20b#part", 2))
        assertEquals("http://h:8080/apps/manifests/ios/00000003.json.minisig", KeptSignatureLookup.keptSignatureUrl("http://h:8080/apps/ios.json", 3))
        assertNull(KeptSignatureLookup.keptSignatureUrl("https://h/manifest", 7))
        assertNull(KeptSignatureLookup.keptSignatureUrl("https://h/.json", 7))
        assertNull(KeptSignatureLookup.keptSignatureUrl("https://h", 7))
        assertNull(KeptSignatureLookup.keptSignatureUrl("https://h/manifest.json", 0))
        assertNull(KeptSignatureLookup.keptSignatureUrl("not a url at all", 7))
    }

    @Test
    fun aKeptSignatureIsLookedForOnlyWhenTheLiveOneIsAnotherReleases() {
        val live = Vectors.text("minisign/signatures/stable-manifest.json.minisig")  // sequence 1
        assertEquals(2L, KeptSignatureLookup.sequence(2, live))
        assertNull(KeptSignatureLookup.sequence(1, live), "this release's own signature failed: nothing else to try")
        assertNull(KeptSignatureLookup.sequence(null, live))
        assertNull(KeptSignatureLookup.sequence(0, live))
        assertNull(KeptSignatureLookup.sequence(2, "not a signature"))
        assertNull(KeptSignatureLookup.sequence(2, Vectors.text("minisign/signatures/hello-legacy.minisig").replace(Regex("trusted comment: .*"), "trusted comment: hashed")))
    }
}
