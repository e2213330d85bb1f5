package dev.modelcast.client.format

/**
 * When a device downloads a model (a model's `download`): [ESSENTIAL] before the app uses
 * it at first launch, [PREFETCH] in the background after launch, [ON_DEMAND] only once the
 * app asks for it. Ordered in that sequence.
 */
enum class DownloadPolicy(val wireName: String) {
    ESSENTIAL("essential"),
    PREFETCH("prefetch"),
    ON_DEMAND("on-demand");

    override fun toString(): String = wireName

    companion object {
        /**
         * The policy written [text].
         * @throws ManifestValueException when it names none.
         */
        @JvmStatic
        fun parse(text: String): DownloadPolicy = values().firstOrNull { it.wireName == text }
            ?: throw ManifestValueException("", text, "is not a download policy (essential, prefetch or on-demand)")
    }
}
