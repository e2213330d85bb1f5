package dev.modelcast.client.format

// A model entry's `licence`, `download_conditions` and `storage`, each value parsed and each
// refusal naming its field. Members these readers do not know are ignored (a newer
// publisher's), as everywhere in a manifest.

/** `licence`: spdx and/or url, and acceptance (`required` or `none`, default none). */
internal fun decodeLicence(fields: JsonFields): ModelLicence {
    val spdx = fields.optionalString("spdx")?.also { fields.parsed("spdx", it, LicenceTerms.Companion::checkSpdx) }
    val url = fields.optionalString("url")?.also { fields.parsed("url", it, LicenceTerms.Companion::checkUrl) }
    if (spdx == null && url == null) throw ManifestValueException(fields.path, null, "names neither spdx nor url (a licence names at least one)")
    val acceptance = fields.optionalString("acceptance")?.let { fields.parsed("acceptance", it, LicenceAcceptance.Companion::parse) }
    return ModelLicence(LicenceTerms(spdx, url), acceptance ?: LicenceAcceptance.NONE)
}

/**
 * `download_conditions`: network (`any`, `unmetered`), cellular_max (bytes 0…2^53),
 * charging (`required`, `any`). Another string for network or charging is kept as unknown
 * (the model waits); another type is refused.
 */
internal fun decodeDownloadConditions(fields: JsonFields): DownloadConditions {
    val unknown = LinkedHashMap<String, String>()
    val networkText = fields.optionalString("network")
    val network = networkText?.let { text -> NetworkRequirement.values().firstOrNull { it.wireName == text } ?: null.also { unknown["network"] = text } }
    val cellularMax = fields.optionalLong("cellular_max")?.let { value ->
        if (value < 0 || value > ByteSize.MAXIMUM) throw ManifestValueException(fields.pathOf("cellular_max"), value.toString(), "is not a size from 0 to 2^53 bytes")
        value
    }
    val chargingText = fields.optionalString("charging")
    val charging = chargingText?.let { text -> ChargingRequirement.values().firstOrNull { it.wireName == text } ?: null.also { unknown["charging"] = text } }
    return DownloadConditions(network ?: NetworkRequirement.ANY, cellularMax, charging ?: ChargingRequirement.ANY, unknown)
}

/** `storage`: install_size (bytes 0…2^53) and priority (0…100, default 50). */
internal fun decodeStorage(fields: JsonFields): ModelStorage {
    val installSize = fields.optionalLong("install_size")?.let { value ->
        if (value < 0 || value > ByteSize.MAXIMUM) throw ManifestValueException(fields.pathOf("install_size"), value.toString(), "is not a size from 0 to 2^53 bytes")
        value
    }
    val priority = fields.optionalLong("priority")?.let { value ->
        if (value !in 0..100) throw ManifestValueException(fields.pathOf("priority"), value.toString(), "is not a storage priority from 0 to 100")
        value.toInt()
    }
    return ModelStorage(installSize, priority ?: ModelStorage.DEFAULT_PRIORITY)
}
