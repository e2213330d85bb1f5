package dev.modelcast.client

import dev.modelcast.client.install.ClientState
import dev.modelcast.client.trust.Vectors
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.io.File

/** [ClientConfiguration.trustedKeySet]'s refusals and the state's verified key set (issue 51, layer 4b). */
class TrustedKeySetConfigurationTest {
    private val keySet = Vectors.bytes("keyset/cases/comment-names-another-version/trusted.json")
    private val base = ClientConfiguration("https://cdn.example.com/m/manifest.json", File("/tmp/unused"), "d")

    @Test
    fun aKeySetIsAccepted() {
        base.copy(trustedKeySet = keySet).validate()
    }

    @Test
    fun keySetWithPublicKeysIsRefused() {
        val error = assertRaises<ClientError.Configuration> {
            base.copy(trustedKeySet = keySet, publicKeys = listOf("RWQf6LRCGA9i53mlYecO4IzT51TGPpvWucNSCh1CBM0QTaLn73Y7GFO3")).validate()
        }
        assertTrue(error.message!!.contains("both set"), error.message)
    }

    @Test
    fun garbageIsRefused() {
        val error = assertRaises<ClientError.Configuration> { base.copy(trustedKeySet = "{}".toByteArray()).validate() }
        assertTrue(error.message!!.contains("not a key set"), error.message)
    }

    @Test
    fun stateKeepsTheVerifiedKeySet() {
        val state = ClientState(sequences = mapOf("u" to 7L), keySet = ClientState.VerifiedKeySet(3, "AAEC"))
        val file = java.nio.file.Files.createTempDirectory("keyset-state").resolve("state.json")
        state.save(file)
        assertEquals(state, ClientState.load(file))
    }
}
