package dev.modelcast.client.trust

/**
 * The name of one file of a signed model, as model_signing writes it in
 * `predicate.resources[].name` and `serialization.ignore_paths`: a relative POSIX path
 * (`tokenizer/vocab.json`), or `.` for the one file of a single-file model. It cannot hold an
 * absolute path, an empty, `.` or `..` component, a control character, or more than 4096
 * UTF-8 bytes, so a name read from a hostile bundle never leaves the model.
 */
class ModelFilePath private constructor(
    /** The name as written (`/`-separated). */
    val rawValue: String
) : Comparable<ModelFilePath> {
    /** Its components; empty for `.`. */
    val components: List<String> = if (rawValue == ".") emptyList() else rawValue.split('/')

    /** True when this name is [other] or lies under it (`.git/HEAD` under `.git`): how model_signing applies `ignore_paths`. */
    fun isWithin(other: ModelFilePath): Boolean =
        other.components.isNotEmpty() && components.size >= other.components.size &&
            components.subList(0, other.components.size) == other.components

    /**
     * model_signing's order (Python's `sorted` over `PurePosixPath`): component by component,
     * each compared by code point (the same as by UTF-8 bytes, not by UTF-16 units), so
     * `a/b` sorts before `a-b` and `a.txt`.
     */
    override fun compareTo(other: ModelFilePath): Int {
        for (index in 0 until minOf(components.size, other.components.size)) {
            val order = compareCodePoints(components[index], other.components[index])
            if (order != 0) return order
        }
        return components.size.compareTo(other.components.size)
    }

    override fun equals(other: Any?): Boolean = other is ModelFilePath && other.rawValue == rawValue
    override fun hashCode(): Int = rawValue.hashCode()
    override fun toString(): String = rawValue

    companion object {
        /** The name of a single-file model's one file. */
        val WHOLE_FILE = ModelFilePath(".")
        /** The longest name accepted, in UTF-8 bytes. */
        const val MAXIMUM_BYTES = 4096

        /** The name [text] when it is `.` or a normalised relative path; else null ([rule] says why). */
        fun parse(text: String): ModelFilePath? = if (rule(text) == null) (if (text == ".") WHOLE_FILE else ModelFilePath(text)) else null

        /** The rule [text] breaks as a model file name (`is empty`, `has a . or .. component`…), or null when it is one. */
        fun rule(text: String): String? {
            if (text.isEmpty()) return "is empty"
            if (text.toByteArray(Charsets.UTF_8).size > MAXIMUM_BYTES) return "is longer than $MAXIMUM_BYTES bytes"
            if (text.any { it < ' ' || it == '\u007f' }) return "contains a control character"
            if (text == ".") return null
            if (text.startsWith("/")) return "is an absolute path (a model's files are named relative to it)"
            val parts = text.split('/')
            if (parts.any { it.isEmpty() }) return "has an empty path component (a doubled or trailing /)"
            if (parts.any { it == "." || it == ".." }) return "has a . or .. component"
            return null
        }

        private fun compareCodePoints(a: String, b: String): Int {
            var i = 0
            var j = 0
            while (i < a.length && j < b.length) {
                val x = a.codePointAt(i)
                val y = b.codePointAt(j)
                if (x != y) return x.compareTo(y)
                i += Character.charCount(x)
                j += Character.charCount(y)
            }
            return (a.length - i).compareTo(b.length - j)
        }
    }
}
