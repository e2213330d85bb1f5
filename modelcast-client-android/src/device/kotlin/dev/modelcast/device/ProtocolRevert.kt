package dev.modelcast.device

import dev.modelcast.client.format.ModelName
import dev.modelcast.client.quoted

/**
 * `revert --dir D MODEL --reason TEXT`: back to MODEL's previous kept version, offline,
 * refusing the version it ran ([dev.modelcast.client.ModelUpdater.reportUnusableBlocking]).
 * Exit 1 when no version is kept to go back to, or MODEL is not installed.
 */
fun ProtocolCall.revert(words: List<String>) {
    val arguments = ProtocolArguments(words, single = setOf("--dir", "--reason"))
    arguments.expectPositional(1, "MODEL")
    val directory = arguments.required("--dir", "D")
    val name = arguments.positional[0]
    if (!ModelName.isValid(name)) throw UsageError("${quoted(name)} is not a model name")
    val reason = arguments.required("--reason", "TEXT")
    val model = updater(directory).reportUnusableBlocking(name, reason)
    println("reverted ${model.name} to ${model.version}" + (model.variant?.let { " (variant $it)" } ?: "") + "; the version it ran is refused")
}
