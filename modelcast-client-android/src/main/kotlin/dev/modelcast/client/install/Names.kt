package dev.modelcast.client.install

import dev.modelcast.client.format.ManifestValueException
import dev.modelcast.client.format.ModelName
import dev.modelcast.client.format.PathSegment
import dev.modelcast.client.format.RelativePath
import java.nio.file.Path

/**
 * The rules a name must meet before the client builds a path from it: the format's own
 * `ModelName`, `PathSegment` and `RelativePath` (asked again here, where the paths are made:
 * the installer takes plain strings, some read back from disk). Each function returns why a
 * value is refused, or null when it is fine.
 */
internal object Names {
    /** Why [text] is not a model name (the format's [ModelName] rule), or null. */
    fun modelNameProblem(text: String): String? = problem { ModelName(text) }

    /** A version as a directory name: what a semantic version is made of (letters, digits, '.', '-', '+'), at most 128, starting with a digit. */
    fun versionProblem(text: String): String? {
        val fine = text.isNotEmpty() && text.length <= 128 && text[0] in '0'..'9' &&
            text.all { it in 'a'..'z' || it in 'A'..'Z' || it in '0'..'9' || it == '.' || it == '-' || it == '+' }
        return if (fine) null else "is not a semantic version (MAJOR.MINOR.PATCH, at most 128 characters)"
    }

    /** Why [text] is not one file or directory name (the format's [PathSegment] rule), or null. */
    fun segmentProblem(text: String): String? = problem { PathSegment(text) }

    /** Why [text] is not a relative '/'-separated path (the format's [RelativePath] rule), or null. */
    fun relativePathProblem(text: String): String? = problem { RelativePath(text) }

    /** The reason a format type refuses a value, or null when it takes it. */
    private inline fun problem(parse: () -> Any): String? =
        try { parse(); null } catch (error: ManifestValueException) { error.reason }

    /** `base` with each segment of the checked relative `path` appended: always inside `base`. */
    fun appended(base: Path, path: String): Path = path.split('/').fold(base) { at, segment -> at.resolve(segment) }

    /** `text` lowered code point by code point (no locale): to compare names as a case-insensitive file system would. */
    fun foldCase(text: String): String {
        val out = StringBuilder(text.length)
        var index = 0
        while (index < text.length) {
            val point = text.codePointAt(index)
            index += Character.charCount(point)
            out.appendCodePoint(Character.toLowerCase(point))
        }
        return out.toString()
    }
}
