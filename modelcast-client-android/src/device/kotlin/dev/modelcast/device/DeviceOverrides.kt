package dev.modelcast.device

import dev.modelcast.client.format.Accelerator
import dev.modelcast.client.format.DevicePlatform
import dev.modelcast.client.format.DeviceProfile
import dev.modelcast.client.quoted

/**
 * What `--device k=v,…` says of the device variants are chosen for. A key not given keeps
 * what the client finds on the machine each call runs on.
 */
class DeviceOverrides private constructor(
    val memory: Long?,
    val platform: DevicePlatform?,
    val osVersion: String?,
    val architecture: String?,
    /** null: not given (the machine's); given, they replace the machine's. */
    val accelerators: Set<Accelerator>?,
    val capabilities: Set<String>?
) {
    /** `profile` with the keys given replaced. */
    fun appliedTo(profile: DeviceProfile): DeviceProfile = profile.copy(
        physicalMemory = memory ?: profile.physicalMemory, platform = platform ?: profile.platform,
        osVersion = osVersion ?: profile.osVersion, architecture = architecture ?: profile.architecture,
        accelerators = accelerators ?: profile.accelerators, capabilities = capabilities ?: profile.capabilities)

    /** The `--device` value that parses back to these overrides (what `device.json` keeps); null when none is given. */
    val text: String?
        get() {
            val pairs = ArrayList<String>()
            memory?.let { pairs.add("memory=$it") }
            platform?.let { pairs.add("platform=${it.wireName}") }
            osVersion?.let { pairs.add("os-version=$it") }
            architecture?.let { pairs.add("arch=$it") }
            accelerators.orEmpty().map { it.wireName }.sorted().forEach { pairs.add("accelerator=$it") }
            capabilities.orEmpty().sorted().forEach { pairs.add("capability=$it") }
            return if (pairs.isEmpty()) null else pairs.joinToString(",")
        }

    companion object {
        /** The keys `--device` takes. */
        val keys = listOf("memory", "platform", "os-version", "arch", "accelerator", "capability")

        /**
         * Parses every `--device` value given (`memory=8589934592,platform=ios`). A key other
         * than `accelerator` and `capability` may be given once across all of them.
         */
        fun parse(lists: List<String>, label: String = "--device"): DeviceOverrides {
            var memory: Long? = null
            var platform: DevicePlatform? = null
            var osVersion: String? = null
            var architecture: String? = null
            var accelerators: MutableSet<Accelerator>? = null
            var capabilities: MutableSet<String>? = null
            fun once(key: String, current: Any?) {
                if (current != null) throw UsageError("$label gives $key twice")
            }
            for (list in lists) {
                for (pair in list.split(",")) {
                    val parts = pair.split("=", limit = 2)
                    if (parts.size != 2 || parts[1].isEmpty()) {
                        throw UsageError("$label ${quoted(pair)} is not KEY=VALUE (keys: ${keys.joinToString(", ")})")
                    }
                    val (key, value) = parts
                    when (key) {
                        "memory" -> { once(key, memory); memory = StrictValue.count(value, "$label memory", positive = true, unit = "bytes") }
                        "platform" -> {
                            once(key, platform)
                            platform = DevicePlatform.fromWireName(value)
                                ?: throw UsageError("$label platform ${quoted(value)} is not one of ${DevicePlatform.values().joinToString(", ") { it.wireName }}")
                        }
                        "os-version" -> { once(key, osVersion); osVersion = StrictValue.version(value, "$label os-version") }
                        "arch" -> { once(key, architecture); architecture = StrictValue.name(value, "$label arch") }
                        "accelerator" -> {
                            val parsed = Accelerator.fromWireName(value)
                                ?: throw UsageError("$label accelerator ${quoted(value)} is not ${Accelerator.values().map { it.wireName }.sorted().joinToString(" or ")}")
                            (accelerators ?: LinkedHashSet<Accelerator>().also { accelerators = it }).add(parsed)
                        }
                        "capability" -> (capabilities ?: LinkedHashSet<String>().also { capabilities = it }).add(StrictValue.name(value, "$label capability"))
                        else -> throw UsageError("$label key ${quoted(key)} is not one of ${keys.joinToString(", ")}")
                    }
                }
            }
            return DeviceOverrides(memory, platform, osVersion, architecture, accelerators, capabilities)
        }
    }
}
