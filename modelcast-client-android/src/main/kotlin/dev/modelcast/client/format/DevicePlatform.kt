package dev.modelcast.client.format

/** The operating systems a variant's `requires.platforms` can name, by their manifest names. */
enum class DevicePlatform(val wireName: String) {
    IOS("ios"), MACOS("macos"), TVOS("tvos"), VISIONOS("visionos"), WATCHOS("watchos"), LINUX("linux"), ANDROID("android");

    override fun toString(): String = wireName

    companion object {
        /** The platform a manifest names [text], or null. */
        @JvmStatic
        fun fromWireName(text: String): DevicePlatform? = values().firstOrNull { it.wireName == text }
    }
}
