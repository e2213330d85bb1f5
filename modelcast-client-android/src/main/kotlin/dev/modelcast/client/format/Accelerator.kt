package dev.modelcast.client.format

/** A hardware accelerator a variant can require (`requires.accelerators`), by its manifest name. */
enum class Accelerator(val wireName: String) {
    // Declared in manifest-name order: requirements are reported in this order.
    GPU("gpu"),
    NEURAL_ENGINE("neural-engine");

    override fun toString(): String = wireName

    companion object {
        /** The accelerator a manifest names [text], or null. */
        @JvmStatic
        fun fromWireName(text: String): Accelerator? = values().firstOrNull { it.wireName == text }
    }
}
