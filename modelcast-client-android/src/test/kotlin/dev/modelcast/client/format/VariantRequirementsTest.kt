package dev.modelcast.client.format

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test

/** Unmet requirements and their sentences, at the edges the vectors do not reach. */
class VariantRequirementsTest {
    private fun unmet(requires: JsonValue, device: DeviceProfile) = VariantRequirements.parse(requires.members).unmetRequirements(device)

    @Test
    fun memoryIsWrittenAsCPrintfRoundsIt() {
        // 0.25 GiB is an exact tie: printf (and the Swift client) rounds it to even, 0.2; Java's %.1f would say 0.3.
        assertEquals("needs 1 GiB of memory; the device has 0.2 GiB",
            unmet(obj("min_memory" to JsonValue.Integer(1L shl 30)), DeviceProfile(physicalMemory = 1L shl 28)).single().message)
        assertEquals("needs 1.5 GiB of memory; the device's memory is unknown",
            unmet(obj("min_memory" to JsonValue.Integer(3L shl 29)), DeviceProfile()).single().message)
    }

    @Test
    fun platformsAndTheirVersions() {
        val requires = obj("platforms" to obj("ios" to str("17.0"), "android" to str("0")))
        assertEquals(listOf(UnmetRequirement("platforms", "runs on android, ios; the device is an unknown platform")), unmet(requires, DeviceProfile()))
        assertEquals(emptyList<UnmetRequirement>(), unmet(requires, DeviceProfile(platform = DevicePlatform.ANDROID)))
        assertEquals("needs ios 17.0 or later; the device's OS version is unknown",
            unmet(requires, DeviceProfile(platform = DevicePlatform.IOS, osVersion = "seventeen")).single().message)
        assertEquals("needs ios 17.0 or later; the device runs 16.7.2",
            unmet(requires, DeviceProfile(platform = DevicePlatform.IOS, osVersion = "16.7.2")).single().message)
    }

    @Test
    fun theOrderOfReasonsIsFixed() {
        val requires = obj("capabilities" to JsonValue.Array(listOf(str("b"), str("a"))), "architectures" to JsonValue.Array(listOf(str("x86_64"), str("arm64"))),
            "accelerators" to JsonValue.Array(listOf(str("neural-engine"), str("gpu"))), "zeta" to JsonValue.Null, "alpha" to JsonValue.Integer(1),
            "min_memory" to JsonValue.Integer(1))
        val reasons = unmet(requires, DeviceProfile(physicalMemory = 0, architecture = "arm64-v8a"))
        assertEquals(listOf("alpha", "zeta", "min_memory", "accelerators", "accelerators", "architectures", "capabilities"), reasons.map { it.requirement })
        assertEquals(listOf("requires 'alpha', which this client does not know", "requires 'zeta', which this client does not know",
            "needs 0.0 GiB of memory; the device has 0 GiB",
            "needs the GPU; the device has none known", "needs the Neural Engine; the device has none known",
            "runs on arm64, x86_64; the device is arm64-v8a", "needs capabilities a, b"), reasons.map { it.message })
    }
}
