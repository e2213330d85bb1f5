package dev.modelcast.client.trust

import dev.modelcast.client.quoted

/** How a model on disk differs from the files a verified statement lists. */
class ModelSignatureDifferences(signed: Map<ModelFilePath, String>, actual: Map<ModelFilePath, String>) {
    /** A file whose content differs from what was signed (digests in lowercase hex). */
    data class Change(val path: ModelFilePath, val signed: String, val actual: String)

    /** Files present in both whose SHA-256 differs, in model_signing's order. */
    val changed: List<Change> = signed.keys.sorted().mapNotNull { path ->
        val now = actual[path]
        val then = signed.getValue(path)
        if (now != null && now != then) Change(path, then, now) else null
    }
    /** Files the statement lists that the model does not have, sorted. */
    val missing: List<ModelFilePath> = signed.keys.filter { it !in actual }.sorted()
    /** Files the model has that the statement does not list, sorted. */
    val extra: List<ModelFilePath> = actual.keys.filter { it !in signed }.sorted()

    /** True when the model is exactly what was signed. */
    val isEmpty: Boolean get() = changed.isEmpty() && missing.isEmpty() && extra.isEmpty()

    /**
     * One line per difference, naming the file: "'weights.bin' changed (signed sha256 …, now
     * …)", "missing 'tokenizer.json' (signed, not in the model)", "extra 'notes.txt' (in the
     * model, not signed)".
     */
    val descriptions: List<String>
        get() = changed.map { "${quoted(it.path.rawValue)} changed (signed sha256 ${it.signed}, now ${it.actual})" } +
            missing.map { "missing ${quoted(it.rawValue)} (signed, not in the model)" } +
            extra.map { "extra ${quoted(it.rawValue)} (in the model, not signed)" }
}
