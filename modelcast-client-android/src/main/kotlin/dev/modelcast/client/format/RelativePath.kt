package dev.modelcast.client.format

import java.io.File

/**
 * A relative `/`-separated path: an object key under the target root, or a file's place in
 * a tree model. Each segment a [PathSegment]; not absolute, no empty segment, at most 1,024
 * UTF-8 bytes. Appended to a directory it always stays inside it.
 */
class RelativePath private constructor(val text: String, val segments: List<PathSegment>) {
    /**
     * Parses [text].
     * @throws ManifestValueException naming the segment that breaks a rule.
     */
    constructor(text: String) : this(text, parse(text))

    /** The path of one segment. */
    constructor(segment: PathSegment) : this(segment.text, listOf(segment))

    /** [base] with each segment appended. */
    fun appendedTo(base: File): File = segments.fold(base) { directory, segment -> File(directory, segment.text) }

    override fun equals(other: Any?): Boolean = other is RelativePath && other.text == text
    override fun hashCode(): Int = text.hashCode()
    override fun toString(): String = text

    private companion object {
        fun parse(text: String): List<PathSegment> {
            val bytes = utf8Length(text)
            if (bytes > 1024) throw ManifestValueException("", text, "is longer than 1024 bytes ($bytes)")
            if (text.startsWith("/")) throw ManifestValueException("", text, "is an absolute path (a relative one is needed)")
            // split with limit -1 keeps empty parts: `a//b` and a trailing `/` are refused, not skipped.
            return text.split("/").map { part ->
                try {
                    PathSegment(part)
                } catch (error: ManifestValueException) {
                    throw ManifestValueException("", text, "has a segment ${quotedValue(part)} that ${error.reason}")
                }
            }
        }
    }
}
