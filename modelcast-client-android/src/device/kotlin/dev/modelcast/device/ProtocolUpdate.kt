package dev.modelcast.device

import dev.modelcast.client.DeviceConditions
import dev.modelcast.client.ModelUpdater
import dev.modelcast.client.NetworkClass
import dev.modelcast.client.UpdateOutcome
import dev.modelcast.client.WaitReason
import dev.modelcast.client.format.DownloadPolicy
import dev.modelcast.client.format.ManifestValueException
import dev.modelcast.client.format.ModelName
import dev.modelcast.client.quoted

/**
 * `update --dir D [--policy P] [--request MODEL]… [--accept-licence MODEL]… [--network
 * unmetered|cellular] [--charging yes|no] [--in-use MODEL]…`: one update of the models
 * `--policy` covers (default on-demand: every model), then each `--request`ed model installed
 * whatever its policy. With `--request` and no `--policy`, only the requested models are
 * installed (the app asked for them; the others wait for their own update).
 *
 * `--accept-licence MODEL` accepts the licence this manifest names for MODEL (as the app's
 * user would, having read it) before the update; `--network` and `--charging` are what the
 * app reports (absent: not reported, so a model that needs them waits); `--in-use MODEL` marks
 * a model in use for this call (never evicted; its last use recorded). Each model that waits
 * gets a line `waiting: MODEL: REASON` on stderr; the call still exits 0 when the rest
 * succeeded. A `--request` of a waiting model exits 1, naming the licence or the condition.
 */
fun ProtocolCall.update(words: List<String>) {
    val arguments = ProtocolArguments(words, single = setOf("--dir", "--policy", "--network", "--charging"),
        repeatable = setOf("--request", "--accept-licence", "--in-use"))
    arguments.expectPositional(0, "")
    val directory = arguments.required("--dir", "D")
    val policy = arguments.value("--policy")?.let { text ->
        try {
            DownloadPolicy.parse(text)
        } catch (error: ManifestValueException) {
            throw UsageError("--policy ${quoted(text)} is not essential, prefetch or on-demand")
        }
    }
    fun models(option: String) = arguments.values(option).map { name ->
        if (!ModelName.isValid(name)) throw UsageError("$option ${quoted(name)} is not a model name")
        name
    }
    val requests = models("--request")
    val accepts = models("--accept-licence")
    val inUse = models("--in-use")
    val network = arguments.value("--network")?.let { text ->
        NetworkClass.values().firstOrNull { it.wireName == text } ?: throw UsageError("--network ${quoted(text)} is not unmetered or cellular")
    }
    val charging = arguments.value("--charging")?.let { text ->
        when (text) { "yes" -> true; "no" -> false; else -> throw UsageError("--charging ${quoted(text)} is not yes or no") }
    }
    val updater = updater(directory)
    updater.setConditions(DeviceConditions(network, charging))
    for (name in inUse) updater.beginUse(name)
    if (accepts.isNotEmpty()) acceptLicences(updater, accepts)
    if (policy != null || requests.isEmpty()) {
        val outcome = updater.updateBlocking(policy ?: DownloadPolicy.ON_DEMAND)
        println(describe(outcome))
        printWaiting(outcome)
    }
    for (name in requests) {
        val model = updater.requestBlocking(name)
        println("requested ${model.name} ${model.version}" + (model.variant?.let { " (variant $it)" } ?: ""))
    }
}

/**
 * Accepts, for each of [models], the licence terms the manifest names now: those the plan
 * of an update of every model shows it waiting for. A model that waits for no licence (none
 * required, or accepted already) needs nothing.
 */
private fun acceptLicences(updater: ModelUpdater, models: List<String>) {
    val waiting = updater.checkBlocking(DownloadPolicy.ON_DEMAND)?.waiting ?: return
    for (name in models) {
        val reason = waiting[name] as? WaitReason.Licence ?: continue
        updater.acceptLicence(name, reason.terms)
        System.err.println("accepted: $name: ${reason.terms}")
    }
}

/** One stderr line per model the update left waiting, `waiting: MODEL: REASON`, by name. */
private fun printWaiting(outcome: UpdateOutcome) {
    val waiting = when (outcome) {
        is UpdateOutcome.UpToDate -> outcome.waiting
        is UpdateOutcome.Updated -> outcome.waiting
        else -> emptyMap()
    }
    for (name in waiting.keys.sorted()) System.err.println(escapedLine("waiting: $name: ${waiting.getValue(name).description}"))
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
