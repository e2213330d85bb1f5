package dev.modelcast.client.format

/**
 * A model's version: a [SemanticVersion] of at most 128 characters (so also a safe
 * directory name: semver allows only letters, digits, `.`, `-` and `+`). Equal when the
 * text is; order versions by [semantic].
 * @throws ManifestValueException when [text] is not one.
 */
class ModelVersion(text: String) {
    val text: String = text
    val semantic: SemanticVersion = (if (text.length <= 128) SemanticVersion.parse(text) else null)
        ?: throw ManifestValueException("", text, "is not a semantic version (MAJOR.MINOR.PATCH, e.g. 1.2.0; at most 128 characters)")

    override fun equals(other: Any?): Boolean = other is ModelVersion && other.text == text
    override fun hashCode(): Int = text.hashCode()
    override fun toString(): String = text
}
