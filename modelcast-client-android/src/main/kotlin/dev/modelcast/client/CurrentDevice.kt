package dev.modelcast.client

import dev.modelcast.client.format.DevicePlatform
import dev.modelcast.client.format.DeviceProfile
import java.io.File

/**
 * This device as the system describes it, read once per process, without any Android
 * framework class (so the core runs on a plain JVM too): physical memory from
 * `/proc/meminfo` (readable by apps on Android), the platform (`android` on Android's
 * runtime, else `linux` or `macos`), the OS version on Android (`android.os.Build.VERSION.RELEASE`,
 * read by reflection), the CPU architecture (`arm64`, `x86_64`). No accelerator is claimed
 * (the app knows its GPU and NPU delegates better) and no capability: the app declares
 * its own through [ClientConfiguration.device].
 */
object CurrentDevice {
    /** The profile [ClientConfiguration.device] starts from. */
    @JvmStatic
    val profile: DeviceProfile by lazy {
        DeviceProfile(physicalMemory = physicalMemory(), platform = platform(), osVersion = osVersion(), architecture = architecture())
    }

    private val isAndroid: Boolean
        get() = System.getProperty("java.vm.vendor").orEmpty().contains("Android", ignoreCase = true) ||
            System.getProperty("java.runtime.name").orEmpty().contains("Android", ignoreCase = true)

    /** `MemTotal` of `/proc/meminfo`, in bytes; null where there is none (macOS) or it cannot be read. */
    private fun physicalMemory(): Long? = try {
        File("/proc/meminfo").useLines { lines ->
            lines.firstOrNull { it.startsWith("MemTotal:") }?.let { line ->
                val parts = line.removePrefix("MemTotal:").trim().split(Regex("\\s+"))
                val kib = parts.firstOrNull()?.toLongOrNull()
                if (kib != null && parts.getOrNull(1) == "kB" && kib > 0 && kib < Long.MAX_VALUE / 1024) kib * 1024 else null
            }
        }
    } catch (error: Exception) {
        null
    }

    private fun platform(): DevicePlatform? {
        if (isAndroid) return DevicePlatform.ANDROID
        val os = System.getProperty("os.name").orEmpty()
        return when {
            os.startsWith("linux", ignoreCase = true) -> DevicePlatform.LINUX
            os.startsWith("mac", ignoreCase = true) -> DevicePlatform.MACOS
            else -> null
        }
    }

    /** Android's release (`14`), by reflection so the core needs no Android class; null elsewhere (a kernel's version is no OS version a variant names). */
    private fun osVersion(): String? {
        if (!isAndroid) return null
        return try {
            Class.forName("android.os.Build\$VERSION").getField("RELEASE").get(null) as? String
        } catch (error: Exception) {
            null
        }
    }

    private fun architecture(): String? {
        val arch = System.getProperty("os.arch").orEmpty()
        fun any(vararg names: String) = names.any { it.equals(arch, ignoreCase = true) }
        return when {
            any("aarch64", "arm64") -> "arm64"
            any("amd64", "x86_64") -> "x86_64"
            any("arm", "armv7l", "armv7") -> "armv7"
            any("x86", "i386", "i686") -> "x86"
            else -> null
        }
    }
}
