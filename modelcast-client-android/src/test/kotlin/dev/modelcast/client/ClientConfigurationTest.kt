package dev.modelcast.client

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.io.File

class ClientConfigurationTest {
    private val base = ClientConfiguration("https://cdn.example.com/models/manifest.json", File("/tmp/modelcast-test"), "device-1")

    @Test
    fun theChannelIsTheOneTheURLNames() {
        assertEquals("stable", base.channel)
        assertEquals("beta", ClientConfiguration.channelOf("https://cdn.example.com/models/channels/beta/manifest.json"))
        assertEquals("https://cdn.example.com/models/channels/beta/manifest.json",
            ClientConfiguration.manifestUrl("https://cdn.example.com/models", "beta"))
        assertEquals("https://cdn.example.com/models/manifest.json", ClientConfiguration.manifestUrl("https://cdn.example.com/models/"))
    }

    @Test
    fun aGoodConfigurationValidates() {
        base.validate()
        base.copy(appVersion = "5.2", models = setOf("m"), maxInstallBytes = 1).validate()
    }

    @Test
    fun everyRefusalNamesTheValue() {
        fun refusal(configuration: ClientConfiguration): String = assertRaises<ClientError.Configuration> { configuration.validate() }.reason
        assertTrue(refusal(base.copy(manifestUrl = "ftp://example.com/manifest.json")).contains("'ftp://example.com/manifest.json'"))
        assertTrue(refusal(base.copy(manifestUrl = "https://user:secret@example.com/manifest.json")).contains("user name or password"))
        assertTrue(refusal(base.copy(channel = "Beta")).contains("'Beta'"))
        assertTrue(refusal(base.copy(appVersion = "five")).contains("'five'"))
        assertTrue(refusal(base.copy(models = setOf("../x"))).contains("'../x'"))
        assertTrue(refusal(base.copy(keepPreviousVersions = -1)).contains("keepPreviousVersions"))
        assertTrue(refusal(base.copy(transferRateWindowSeconds = 0.0)).contains("transferRateWindowSeconds"))
        assertTrue(refusal(base.copy(directoryLockTimeoutSeconds = Double.NaN)).contains("NaN"))
    }

    @Test
    fun aBadConfigurationCreatesNothing() {
        val directory = File(System.getProperty("java.io.tmpdir"), "modelcast-never-${System.nanoTime()}")
        assertRaises<ClientError.Configuration> { ModelUpdater(base.copy(directory = directory, manifestUrl = "not a url")) }
        assertTrue(!directory.exists())
    }
}
