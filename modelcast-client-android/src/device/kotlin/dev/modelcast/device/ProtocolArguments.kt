package dev.modelcast.device

import dev.modelcast.client.quoted

/** A command-line mistake: exit 2, this message. */
class UsageError(message: String) : Exception(message)

/**
 * The words after a protocol subcommand, split strictly: every `--option` must be one the
 * call takes and have a non-empty value; an option that is not repeatable may appear once;
 * every other word is positional. Nothing is guessed (no `--option=value`, no abbreviation).
 *
 * @param single options given at most once
 * @param repeatable options that may repeat
 */
class ProtocolArguments(words: List<String>, single: Set<String>, repeatable: Set<String> = emptySet()) {
    private val values = LinkedHashMap<String, MutableList<String>>()
    /** The words that are no option nor an option's value, in order. */
    val positional: List<String>

    init {
        val positional = ArrayList<String>()
        var index = 0
        while (index < words.size) {
            val word = words[index++]
            if (!word.startsWith("-") || word == "-") {
                positional.add(word)
                continue
            }
            if (word !in single && word !in repeatable) throw UsageError("unknown option ${quoted(word)}")
            // `--dir --policy …`: the value was forgotten, not a directory named `--policy`.
            val value = words.getOrNull(index++)
            if (value == null || value.isEmpty() || value in single || value in repeatable) throw UsageError("$word needs a value")
            if (word !in repeatable && values.containsKey(word)) throw UsageError("$word is given twice")
            values.getOrPut(word) { ArrayList() }.add(value)
        }
        this.positional = positional
    }

    /** The value of a single option, if given. */
    fun value(option: String): String? = values[option]?.first()

    /** Every value of an option, in the order given. */
    fun values(option: String): List<String> = values[option] ?: emptyList()

    /** The value of an option the call cannot do without. */
    fun required(option: String, placeholder: String): String = value(option) ?: throw UsageError("$option $placeholder is required")

    /** Refuses positional words beyond the [count] expected, and too few of them ([what] names the missing one). */
    fun expectPositional(count: Int, what: String) {
        if (positional.size > count) throw UsageError("unexpected argument ${quoted(positional[count])}")
        if (positional.size < count) throw UsageError("$what is required")
    }
}
