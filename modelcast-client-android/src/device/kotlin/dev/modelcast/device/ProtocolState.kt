package dev.modelcast.device

import dev.modelcast.client.InstalledState

/**
 * `state --dir D`: the client's state as one JSON document (`conformance/state.schema.json`)
 * on stdout, from [dev.modelcast.client.ModelUpdater.installedStateBlocking]: no request,
 * nothing written.
 */
fun ProtocolCall.state(words: List<String>) {
    val arguments = ProtocolArguments(words, single = setOf("--dir"))
    arguments.expectPositional(0, "")
    val updater = updater(arguments.required("--dir", "D"))
    println(JsonText.pretty(stateDocument(updater.installedStateBlocking())))
}

/**
 * `state`'s document: `protocol`, `sequence` (null before the first manifest trusted) and per
 * model its `version`, `variant`, `files`, `previous` and `refused`, nulls written out as the
 * schema requires them; `licences` (model → accepted `spdx` and `url`) when any was accepted.
 */
fun stateDocument(state: InstalledState): Map<String, Any?> = linkedMapOf<String, Any?>(
    "protocol" to 1,
    "sequence" to state.sequence,
    "models" to state.models.associate { model ->
        model.name to linkedMapOf(
            "version" to model.version,
            "variant" to model.variant,
            "files" to model.files.map { mapOf("path" to it.path, "sha256" to it.sha256) },
            "previous" to model.previous,
            "refused" to model.refused)
    }).apply {
    // Optional in the schema: written only once a licence was accepted, so a client without any stays as before.
    if (state.licences.isNotEmpty()) {
        put("licences", state.licences.toSortedMap().mapValues { (_, terms) -> linkedMapOf("spdx" to terms.spdx, "url" to terms.url) })
    }
}
