package dev.modelcast.client.format

import java.math.BigDecimal
import java.math.RoundingMode

/**
 * What a variant needs of a device (`requires`), parsed. Every requirement is optional; a
 * variant with none runs anywhere. Keys this format does not know are kept in [unknown]:
 * a device never takes a variant it cannot judge.
 */
data class VariantRequirements(
    /** Physical memory in bytes (`min_memory`). */
    val minMemory: Long? = null,
    /** Platforms it runs on, each with its lowest OS version (`{"ios": "17.0"}`; `"0"` for any). null: any platform. */
    val platforms: Map<DevicePlatform, AppVersion>? = null,
    /** Accelerators the device must have. */
    val accelerators: Set<Accelerator> = emptySet(),
    /** CPU architectures it runs on; empty: any. */
    val architectures: Set<String> = emptySet(),
    /** Capabilities the app must declare. */
    val capabilities: Set<String> = emptySet(),
    /** Requirement keys this client does not know, sorted. */
    val unknown: List<String> = emptyList()
) {
    init {
        require(minMemory == null || minMemory in 0..ByteSize.MAXIMUM) { "min_memory $minMemory is outside 0…2^53" }
        require(platforms == null || platforms.isNotEmpty()) { "platforms, when given, names at least one" }
    }

    /**
     * Why [device] cannot take a variant with these requirements, one per unmet requirement,
     * empty when it can. A value the device does not know counts as unmet. The order is
     * fixed (the conformance vectors hold clients to it): unknown keys, `min_memory`,
     * `platforms`, `accelerators` (one per missing accelerator, `gpu` first),
     * `architectures`, `capabilities`.
     */
    fun unmetRequirements(device: DeviceProfile): List<UnmetRequirement> {
        val reasons = ArrayList<UnmetRequirement>()
        fun add(key: String, message: String) { reasons.add(UnmetRequirement(key, message)) }
        for (key in unknown) add(key, "requires ${quotedValue(key)}, which this client does not know")
        if (minMemory != null) {
            val memory = device.physicalMemory
            when {
                memory == null -> add("min_memory", "needs ${gib(minMemory)} of memory; the device's memory is unknown")
                memory < minMemory -> add("min_memory", "needs ${gib(minMemory)} of memory; the device has ${gib(memory)}")
            }
        }
        if (platforms != null) {
            val platform = device.platform
            val lowest = platform?.let { platforms[it] }
            if (platform != null && lowest != null) {
                val os = device.osVersion?.let { text -> try { AppVersion(text) } catch (e: ManifestValueException) { null } }
                if (os != null) {
                    if (os < lowest) add("platforms", "needs ${platform.wireName} $lowest or later; the device runs $os")
                } else if (lowest != AppVersion("0")) {
                    add("platforms", "needs ${platform.wireName} $lowest or later; the device's OS version is unknown")
                }
            } else {
                add("platforms", "runs on ${platforms.keys.map { it.wireName }.sorted().joinToString(", ")}; the device is ${platform?.wireName ?: "an unknown platform"}")
            }
        }
        for (accelerator in accelerators.sortedBy { it.wireName }) {
            if (accelerator !in device.accelerators) {
                add("accelerators", "needs the ${if (accelerator == Accelerator.NEURAL_ENGINE) "Neural Engine" else "GPU"}; the device has none known")
            }
        }
        if (architectures.isNotEmpty() && device.architecture !in architectures) {
            add("architectures", "runs on ${architectures.sorted().joinToString(", ")}; the device is ${device.architecture ?: "an unknown architecture"}")
        }
        val missing = (capabilities - device.capabilities).sorted()
        if (missing.isNotEmpty()) add("capabilities", "needs capabilit${if (missing.size == 1) "y" else "ies"} ${missing.joinToString(", ")}")
        return reasons
    }

    /** The sentences of [unmetRequirements]. */
    fun unmet(device: DeviceProfile): List<String> = unmetRequirements(device).map { it.message }

    companion object {
        /** The keys this format knows. */
        @JvmField
        val KNOWN_KEYS: List<String> = listOf("min_memory", "platforms", "accelerators", "architectures", "capabilities")

        /**
         * Parses a `requires` object's members.
         * @throws ManifestValueException whose field is relative to the object (`platforms.ios`).
         */
        @JvmStatic
        fun parse(members: Map<String, JsonValue>): VariantRequirements {
            fun <T> at(key: String, make: () -> T): T =
                try { make() } catch (error: ManifestValueException) { throw error.within(fieldName(key)) }
            val unknown = members.keys.filter { it !in KNOWN_KEYS }.sorted()
            for (key in unknown) at(key) { checkPrintable(key, 64, "a requirement name") }
            val minMemory = members["min_memory"]?.let { value ->
                at("min_memory") {
                    val bytes = exactLong(value) ?: throw ManifestValueException("", compactText(value), "is not a byte count")
                    ByteSize(bytes).bytes
                }
            }
            val platforms = members["platforms"]?.let { value -> at("platforms") { platforms(value) } }
            val accelerators = at("accelerators") {
                names(members["accelerators"]).map { name ->
                    Accelerator.fromWireName(name) ?: throw ManifestValueException("", name,
                        "is not an accelerator (neural-engine, gpu)")
                }.toSet()
            }
            val architectures = at("architectures") { names(members["architectures"]).toSet() }
            val capabilities = at("capabilities") { names(members["capabilities"]).toSet() }
            return VariantRequirements(minMemory, platforms, accelerators, architectures, capabilities, unknown)
        }

        private fun platforms(value: JsonValue): Map<DevicePlatform, AppVersion> {
            if (value !is JsonValue.Object || value.members.isEmpty() || value.members.size > DevicePlatform.values().size) {
                throw ManifestValueException("", compactText(value), "is not an object of platform to lowest OS version (e.g. {\"ios\": \"17.0\"})")
            }
            val platforms = LinkedHashMap<DevicePlatform, AppVersion>()
            for ((key, version) in value.members.toSortedMap()) {
                val platform = DevicePlatform.fromWireName(key) ?: throw ManifestValueException(fieldName(key), key,
                    "is not a platform (${DevicePlatform.values().joinToString(", ") { it.wireName }})")
                val text = version.stringValue
                platforms[platform] = (if (text == null) null else try { AppVersion(text) } catch (e: ManifestValueException) { null })
                    ?: throw ManifestValueException(fieldName(key), compactText(version), "is not an OS version (e.g. 17.0; \"0\" for any)")
            }
            return platforms
        }

        /** A list of at most 64 names, each printable ASCII of at most 64 characters (absent: none). */
        private fun names(value: JsonValue?): List<String> {
            if (value == null) return emptyList()
            if (value !is JsonValue.Array || value.items.size > 64) throw ManifestValueException("", compactText(value), "is not a list of at most 64 names")
            return value.items.map { item ->
                val text = item.stringValue ?: throw ManifestValueException("", compactText(item), "is not a name")
                checkPrintable(text, 64, "a name")
                text
            }
        }

        /** `6 GiB`, `6.0 GiB`: whole GiB as an integer, else one decimal rounded as C's printf does. */
        internal fun gib(bytes: Long): String {
            val value = bytes.toDouble() / (1L shl 30).toDouble()
            return if (value == Math.rint(value)) "${value.toLong()} GiB"
            else BigDecimal(value).setScale(1, RoundingMode.HALF_EVEN).toPlainString() + " GiB"
        }
    }
}
