package dev.modelcast.client

import dev.modelcast.client.format.LicenceTerms
import dev.modelcast.client.install.InstallSpace
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import java.io.File
import java.nio.file.Path
import java.time.Instant

/**
 * Issue 50 end to end against a static server on 127.0.0.1: the licence gate, download
 * conditions, the free-space check before downloads and the storage budget. Each rule is
 * proven by the artifact requests the server saw (none for a model that waits or is refused).
 */
class ConditionsTest {
    private val server = StaticServer()
    private var now = Instant.parse("2026-03-01T00:00:00Z")

    @TempDir
    lateinit var temporary: Path

    @AfterEach
    fun stop() = server.close()

    /** A model to publish: one file of [size] bytes, and the extra members of its entry ([extra], JSON without braces). */
    private class Model(val name: String, val version: String, val size: Int, val extra: String = "")

    private fun bytes(model: Model) = ByteArray(model.size) { (it * 31 + model.name.hashCode() + model.version.hashCode()).toByte() }

    private fun publish(sequence: Long, vararg models: Model) =
        Publisher(server).publish(sequence, models.associate { it.name to Pair(it.version, bytes(it)) }, extra = models.associate { it.name to it.extra })

    private fun configuration() = ClientConfiguration(server.base + "/manifest.json", File(temporary.toFile(), "client"), "device-1", clock = { now })

    /** The artifact requests made for [model] so far. */
    private fun artifactRequests(model: String) = server.requests.count { it.startsWith("GET /$model/") }

    private val licence = """"licence":{"spdx":"Llama-3.2-Community","url":"https://example.com/LICENSE.txt","acceptance":"required"}"""
    private val terms = LicenceTerms("Llama-3.2-Community", "https://example.com/LICENSE.txt")

    @Test
    fun aLicenceToAcceptKeepsTheModelWaitingWithoutARequestUntilAccepted() {
        publish(1, Model("m", "1.0.0", 1000, licence), Model("free", "1.0.0", 1000))
        ModelUpdater(configuration()).use { updater ->
            val outcome = updater.updateBlocking() as UpdateOutcome.Updated
            assertEquals(mapOf("free" to "1.0.0"), outcome.models)
            assertEquals(mapOf("m" to WaitReason.Licence(terms.spdx, terms.url)), outcome.waiting)
            assertEquals("licence Llama-3.2-Community (https://example.com/LICENSE.txt) not accepted", outcome.waiting.getValue("m").description)
            assertEquals(0, artifactRequests("m"), server.requests.toString())
            assertNull(updater.installed("m"))
            val error = assertRaises<ClientError.LicenceNotAccepted> { updater.requestBlocking("m") }
            assertEquals(Pair(terms.spdx, terms.url), Pair(error.spdx, error.url))
            assertEquals(0, artifactRequests("m"))
            updater.acceptLicence("m", terms)
        }
        // The acceptance is kept in the directory: another updater (another launch) sees it.
        ModelUpdater(configuration()).use { updater ->
            assertEquals(mapOf("m" to terms), updater.acceptedLicences())
            assertEquals(mapOf("m" to terms), updater.installedStateBlocking().licences)
            val outcome = updater.updateBlocking() as UpdateOutcome.Updated
            assertEquals(mapOf("m" to "1.0.0"), outcome.models)
            assertTrue(outcome.waiting.isEmpty())
        }
    }

    @Test
    fun aChangedLicenceAsksAgainAndTheOldVersionKeepsRunning() {
        publish(1, Model("m", "1.0.0", 1000, licence))
        ModelUpdater(configuration()).use { updater ->
            updater.acceptLicence("m", terms)
            updater.updateBlocking()
            assertEquals("1.0.0", updater.installed("m")!!.version)
            publish(2, Model("m", "2.0.0", 1000, licence.replace("LICENSE.txt", "LICENSE-2.txt")))
            val plan = updater.checkBlocking()!!
            assertEquals(WaitReason.Licence(terms.spdx, "https://example.com/LICENSE-2.txt"), plan.waiting["m"])
            assertTrue(plan.installs.isEmpty())
            assertEquals(UpdateOutcome.UpToDate(2, plan.waiting), updater.updateBlocking())
            assertEquals("1.0.0", updater.installed("m")!!.version)
            assertEquals(0, server.requests.count { it.startsWith("GET /m/2.0.0/") })
            // Not a 304 while the model waits: an acceptance must be acted on by the next update.
            updater.acceptLicence("m", (plan.waiting.getValue("m") as WaitReason.Licence).terms)
            assertEquals(UpdateOutcome.Updated(2, mapOf("m" to "2.0.0")), updater.updateBlocking())
        }
    }

    @Test
    fun anUnmeteredOnlyModelWaitsUntilTheAppReportsAnUnmeteredNetwork() {
        publish(1, Model("m", "1.0.0", 1000, """"download_conditions":{"network":"unmetered"}"""), Model("free", "1.0.0", 1000))
        ModelUpdater(configuration()).use { updater ->
            val silent = updater.updateBlocking() as UpdateOutcome.Updated
            assertEquals(WaitReason.NotReported("network"), silent.waiting["m"])
            assertEquals("needs an unmetered network, and the app has not reported the network", silent.waiting.getValue("m").description)
            assertEquals("1.0.0", updater.installed("free")!!.version)
            updater.setConditions(DeviceConditions(network = NetworkClass.CELLULAR))
            assertEquals(WaitReason.Network("unmetered"), (updater.updateBlocking() as UpdateOutcome.UpToDate).waiting["m"])
            assertRaises<ClientError.ConditionsNotMet> { updater.requestBlocking("m") }
            assertEquals(0, artifactRequests("m"))
            updater.setConditions(DeviceConditions(network = NetworkClass.UNMETERED))
            assertEquals(UpdateOutcome.Updated(1, mapOf("m" to "1.0.0")), updater.updateBlocking())
        }
    }

    @Test
    fun onAMeteredNetworkAModelDownloadsOnlyWithinItsCap() {
        publish(1, Model("under", "1.0.0", 1000, """"download_conditions":{"cellular_max":1000}"""),
            Model("over", "1.0.0", 1001, """"download_conditions":{"cellular_max":1000}"""))
        ModelUpdater(configuration().copy(conditions = DeviceConditions(NetworkClass.CELLULAR))).use { updater ->
            val outcome = updater.updateBlocking() as UpdateOutcome.Updated
            assertEquals(mapOf("under" to "1.0.0"), outcome.models)
            assertEquals(mapOf("over" to WaitReason.CellularCap(1001, 1000)), outcome.waiting)
            assertEquals(0, artifactRequests("over"))
            updater.setConditions(DeviceConditions(NetworkClass.UNMETERED))
            assertEquals(UpdateOutcome.Updated(1, mapOf("over" to "1.0.0")), updater.updateBlocking())
        }
    }

    @Test
    fun aModelThatNeedsChargingWaitsUntilTheDeviceCharges() {
        publish(1, Model("m", "1.0.0", 1000, """"download_conditions":{"charging":"required"}"""))
        ModelUpdater(configuration()).use { updater ->
            assertEquals(WaitReason.NotReported("charging"), (updater.updateBlocking() as UpdateOutcome.UpToDate).waiting["m"])
            updater.setConditions(DeviceConditions(charging = false))
            assertEquals(WaitReason.Charging, (updater.updateBlocking() as UpdateOutcome.UpToDate).waiting["m"])
            assertEquals("needs the device to be charging", WaitReason.Charging.description)
            assertEquals(0, artifactRequests("m"))
            updater.setConditions(DeviceConditions(charging = true))
            assertEquals(UpdateOutcome.Updated(1, mapOf("m" to "1.0.0")), updater.updateBlocking())
        }
    }

    @Test
    fun anUnknownConditionValueDefersThatModelAlone() {
        publish(1, Model("m", "1.0.0", 1000, """"download_conditions":{"network":"satellite"}"""), Model("free", "1.0.0", 1000),
            Model("l", "1.0.0", 1000, """"licence":{"spdx":"MIT","acceptance":"twice"}"""))
        ModelUpdater(configuration().copy(conditions = DeviceConditions(NetworkClass.UNMETERED, true))).use { updater ->
            val outcome = updater.updateBlocking() as UpdateOutcome.Updated
            assertEquals(mapOf("free" to "1.0.0"), outcome.models)
            assertEquals(WaitReason.UnknownCondition("licence acceptance 'twice'"), outcome.waiting["l"])
            assertEquals(0, artifactRequests("l"))
            assertEquals(WaitReason.UnknownCondition("network 'satellite'"), outcome.waiting["m"])
            assertEquals("has a condition this client does not know (network 'satellite'); it waits for a newer client", outcome.waiting.getValue("m").description)
            assertEquals(0, artifactRequests("m"))
        }
    }

    @Test
    fun aModelTheVolumeCannotHoldIsRefusedBeforeAnyRequest() {
        publish(1, Model("small", "1.0.0", 1000), Model("huge", "1.0.0", 1000, """"storage":{"install_size":9007199254740992}"""))
        ModelUpdater(configuration()).use { updater ->
            val error = assertRaises<ClientError.InsufficientSpaceForDownload> { updater.updateBlocking() }
            assertEquals("huge", error.model)
            assertTrue(error.needed > error.free && error.needed >= 9007199254740992L, error.message)
            assertEquals(ClientError.Kind.REFUSED, error.kind)
            assertEquals(0, server.requests.count { it.endsWith(".bin") }, server.requests.toString())
            assertTrue(updater.installedModels().isEmpty())
        }
    }

    private val onDemand = """"download":"on-demand""""

    @Test
    fun theBudgetEvictsTheLeastRecentlyUsedOnDemandModelNotInUse() {
        publish(1, Model("a", "1.0.0", 100_000, onDemand), Model("b", "1.0.0", 100_000, onDemand), Model("c", "1.0.0", 100_000, onDemand))
        ModelUpdater(configuration().copy(storageBudget = 250_000)).use { updater ->
            updater.requestBlocking("a")
            updater.requestBlocking("b")
            updater.beginUse("b"); updater.endUse("b")
            now = now.plusSeconds(60)
            updater.beginUse("a"); updater.endUse("a")
            // b was used longest ago: c takes its room (an update of every model would evict nothing).
            val plan = updater.checkBlocking()!!
            assertEquals(mapOf("c" to "1.0.0"), plan.installs)
            assertEquals(emptyList<String>(), plan.evictions)
            updater.requestBlocking("c")
            assertEquals(listOf("a", "c"), updater.installedModels().map { it.name })
            assertFalse(File(temporary.toFile(), "client/models/b/versions").exists())
            // A model in use is never evicted: b comes back in place of c, though a is older.
            now = now.plusSeconds(60)
            updater.beginUse("c"); updater.endUse("c")
            updater.beginUse("a")
            updater.requestBlocking("b")
            assertEquals(listOf("a", "b"), updater.installedModels().map { it.name })
        }
    }

    @Test
    fun theLowestStoragePriorityGoesFirst() {
        publish(1, Model("a", "1.0.0", 100_000, "$onDemand,\"storage\":{\"install_size\":100000,\"priority\":90}"),
            Model("b", "1.0.0", 100_000, "$onDemand,\"storage\":{\"install_size\":100000,\"priority\":10}"),
            Model("c", "1.0.0", 100_000, onDemand))
        ModelUpdater(configuration().copy(storageBudget = 250_000)).use { updater ->
            updater.requestBlocking("a")
            updater.requestBlocking("b")
            // b is the more recently installed of the two (and its name the later), but its priority is lower.
            updater.requestBlocking("c")
            assertEquals(listOf("a", "c"), updater.installedModels().map { it.name })
        }
    }

    @Test
    fun whenEvictingCannotMakeRoomNothingIsEvictedNorDownloaded() {
        publish(1, Model("e", "1.0.0", 200_000, """"download":"essential""""), Model("o", "1.0.0", 40_000, onDemand),
            Model("c", "1.0.0", 100_000, onDemand))
        ModelUpdater(configuration().copy(storageBudget = 250_000)).use { updater ->
            updater.updateBlocking(dev.modelcast.client.format.DownloadPolicy.ESSENTIAL)
            updater.requestBlocking("o")
            val error = assertRaises<ClientError.OverStorageBudget> { updater.requestBlocking("c") }
            assertEquals("c", error.model)
            // The three models' files, and the installed ones' version records.
            assertTrue(error.needed in 340_000L..341_000L, error.message)
            assertEquals(250_000L, error.budget)
            assertEquals(listOf("o", "e"), error.wouldEvict)
            assertEquals(0, artifactRequests("c"))
            assertEquals(listOf("e", "o"), updater.installedModels().map { it.name })
        }
    }

    /**
     * An update of every model (on-demand, the default) evicts none: it wants them all, and an
     * eviction would only make its next call install the evicted model again and evict
     * another, downloading without end. Over the budget it is refused naming what would go.
     */
    @Test
    fun anUpdateOfEveryModelEvictsNothing() {
        publish(1, Model("a", "1.0.0", 40_000, onDemand), Model("b", "1.0.0", 40_000, onDemand))
        ModelUpdater(configuration().copy(storageBudget = 60_000)).use { updater ->
            updater.requestBlocking("a")
            repeat(2) {
                val error = assertRaises<ClientError.OverStorageBudget> { updater.updateBlocking() }
                assertEquals("b", error.model)
                assertEquals(listOf("a"), error.wouldEvict)
                assertTrue(error.message!!.contains("it would have to remove 'a'"), error.message)
                assertEquals(listOf("a"), updater.installedModels().map { it.name })
            }
            assertEquals(0, artifactRequests("b"), "nothing of b was fetched")
            assertEquals(1, artifactRequests("a"), "a was fetched once")
            // Asked for alone, b takes a's place.
            updater.requestBlocking("b")
            assertEquals(listOf("b"), updater.installedModels().map { it.name })
        }
    }

    /**
     * The free space asked before a download: what is still to download, plus what the
     * install adds beside it (install_size less the plain files, which are installed as a
     * second link to their download, not a copy), plus the reserve: the plain file is not
     * counted twice. The Swift client's sum.
     */
    @Test
    fun aPlainFileIsCountedOnceInTheFreeSpaceNeeded() {
        val size = 1L shl 52
        Publisher(server).publish(1, mapOf("m" to Pair("1.0.0", ByteArray(1000) { it.toByte() })), extra = mapOf("m" to """"storage":{"install_size":$size}"""))
        ModelUpdater(configuration()).use { updater ->
            val error = assertRaises<ClientError.InsufficientSpaceForDownload> { updater.updateBlocking() }
            assertEquals(1000 + (size - 1000) + InstallSpace.RESERVED_SPACE, error.needed, error.message)
            assertTrue(error.message!!.contains("bytes of free space needed"), error.message)
            assertEquals(0, artifactRequests("m"))
        }
    }

    /**
     * Two updaters on one directory accepting licences at the same time keep every
     * acceptance: each records under the record lock, so neither writes over an entry the
     * other added meanwhile.
     */
    @Test
    fun acceptancesFromTwoUpdatersAtOnceAreAllKept() {
        val terms = LicenceTerms("MIT", null)
        val perSide = 150
        ModelUpdater(configuration()).use { first ->
            ModelUpdater(configuration()).use { second ->
                val threads = listOf("a" to first, "b" to second).map { (side, updater) ->
                    Thread { for (index in 0 until perSide) updater.acceptLicence("$side$index", terms) }
                }
                threads.forEach { it.start() }
                threads.forEach { it.join() }
                assertEquals(2 * perSide, first.acceptedLicences().size, "an acceptance was lost")
            }
        }
    }
}
