package dev.modelcast.client.format

/**
 * A channel name: `[a-z0-9][a-z0-9-]*`, at most 64 characters. It names the manifest's
 * place (`channels/NAME/manifest.json`) and the trusted comment's file field.
 * @throws ManifestValueException when [text] is not one.
 */
class ChannelName(text: String) {
    val text: String = text.also {
        if (!isValid(it)) {
            throw ManifestValueException("", it,
                "is not a channel name (lowercase letters, digits and '-', starting with a letter or digit, at most 64 characters)")
        }
    }

    override fun equals(other: Any?): Boolean = other is ChannelName && other.text == text
    override fun hashCode(): Int = text.hashCode()
    override fun toString(): String = text

    companion object {
        /** Whether [text] is a channel name. */
        @JvmStatic
        fun isValid(text: String): Boolean {
            fun lowerOrDigit(char: Char) = char in '0'..'9' || char in 'a'..'z'
            return text.isNotEmpty() && text.length <= 64 && lowerOrDigit(text[0]) && text.all { lowerOrDigit(it) || it == '-' }
        }

        /** `stable`, the default channel. */
        @JvmField
        val STABLE: ChannelName = ChannelName("stable")
    }
}
