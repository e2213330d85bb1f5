package dev.modelcast.device

import dev.modelcast.client.UpdateOutcome
import dev.modelcast.client.format.DownloadPolicy
import dev.modelcast.client.format.ManifestValueException
import dev.modelcast.client.format.ModelName
import dev.modelcast.client.quoted

/**
 * `update --dir D [--policy P] [--request MODEL]…`: one update of the models `--policy`
 * covers (default on-demand: every model), then each `--request`ed model installed whatever
 * its policy. With `--request` and no `--policy`, only the requested models are installed
 * (the app asked for them; the others wait for their own update).
 */
fun ProtocolCall.update(words: List<String>) {
    val arguments = ProtocolArguments(words, single = setOf("--dir", "--policy"), repeatable = setOf("--request"))
    arguments.expectPositional(0, "")
    val directory = arguments.required("--dir", "D")
    val policy = arguments.value("--policy")?.let { text ->
        try {
            DownloadPolicy.parse(text)
        } catch (error: ManifestValueException) {
            throw UsageError("--policy ${quoted(text)} is not essential, prefetch or on-demand")
        }
    }
    val requests = arguments.values("--request").map { name ->
        if (!ModelName.isValid(name)) throw UsageError("--request ${quoted(name)} is not a model name")
        name
    }
    val updater = updater(directory)
    if (policy != null || requests.isEmpty()) {
        println(describe(updater.updateBlocking(policy ?: DownloadPolicy.ON_DEMAND)))
    }
    for (name in requests) {
        val model = updater.requestBlocking(name)
        println("requested ${model.name} ${model.version}" + (model.variant?.let { " (variant $it)" } ?: ""))
    }
}

/** The line an update's outcome prints (the Swift device's words). */
fun describe(outcome: UpdateOutcome): String = when (outcome) {
    is UpdateOutcome.NotModified -> "not modified"
    is UpdateOutcome.UpToDate -> "up to date (sequence ${outcome.sequence})"
    is UpdateOutcome.Updated ->
        "updated to sequence ${outcome.sequence}: " + outcome.models.keys.sorted().joinToString(", ") { "$it ${outcome.models[it]}" }
    // No `shouldDownload` is configured, so the library never defers; said in case it does.
    is UpdateOutcome.Deferred -> "deferred: ${outcome.plan.bytesToDownload} bytes to download"
}
