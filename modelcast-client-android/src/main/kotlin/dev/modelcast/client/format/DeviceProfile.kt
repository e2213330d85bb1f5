package dev.modelcast.client.format

/**
 * What a device is, as variants judge it. Every field may be unknown (null or empty); a
 * requirement about an unknown value counts as unmet. The Android layer fills it (memory
 * from ActivityManager, [osVersion] from Build.VERSION.RELEASE, [architecture] from the
 * primary ABI); an app may override any field.
 *
 * [architecture] is compared as written with a manifest's `architectures` (`arm64`,
 * `x86_64` as the Swift client names them): an Android ABI name (`arm64-v8a`) must be
 * mapped before it is set here, or no variant naming `arm64` matches.
 */
data class DeviceProfile @JvmOverloads constructor(
    /** Physical memory in bytes. */
    val physicalMemory: Long? = null,
    val platform: DevicePlatform? = null,
    /** The OS version (`14`, `17.4.1`), compared as an [AppVersion]. */
    val osVersion: String? = null,
    /** The CPU architecture (`arm64`, `x86_64`). */
    val architecture: String? = null,
    /** The accelerators known to be present. */
    val accelerators: Set<Accelerator> = emptySet(),
    /** Capabilities the app declares (matched exactly against a variant's `capabilities`). */
    val capabilities: Set<String> = emptySet()
)
