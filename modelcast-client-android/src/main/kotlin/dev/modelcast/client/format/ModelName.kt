package dev.modelcast.client.format

/**
 * A model name: ASCII letters, digits, `.`, `_` and `-`, 1 to 128 characters, not `.` or
 * `..`. It becomes a key segment, a URL segment and a directory on the device.
 * @throws ManifestValueException when [text] is not one.
 */
class ModelName(text: String) : Comparable<ModelName> {
    val text: String = text.also {
        if (!isValid(it)) throw ManifestValueException("", it, "is not a model name (letters, digits, '.', '_' and '-', at most 128, not '.' or '..')")
    }

    /** The name as a directory or key segment. */
    val segment: PathSegment get() = PathSegment(text)

    override fun compareTo(other: ModelName): Int = text.compareTo(other.text)
    override fun equals(other: Any?): Boolean = other is ModelName && other.text == text
    override fun hashCode(): Int = text.hashCode()
    override fun toString(): String = text

    companion object {
        /** True when [text] is a model name. */
        @JvmStatic
        fun isValid(text: String): Boolean =
            text.isNotEmpty() && text.length <= 128 && text != "." && text != ".." &&
                text.all { it in '0'..'9' || it in 'A'..'Z' || it in 'a'..'z' || it == '.' || it == '_' || it == '-' }
    }
}
