package dev.modelcast.client.format

// The document's top level, read and checked in the Swift client's order.

internal fun decodeRelease(document: JsonValue): Release {
    if (document !is JsonValue.Object) throw ManifestValueException("(document)", null, "is not a JSON object (a manifest is one)")
    val fields = JsonFields(document.members, "")
    val format = fields.string("format")
    if (format != Release.FORMAT_NAME) throw ManifestValueException("format", format, "is not ${Release.FORMAT_NAME} (not a modelcast manifest)")
    val formatVersion = fields.long("format_version")
    if (formatVersion != Release.FORMAT_VERSION) {
        throw ManifestValueException("format_version", formatVersion.toString(), "is not supported (this client reads ${Release.FORMAT_VERSION})")
    }
    val sequence = sequence(fields, "sequence")
    val publishedAt = fields.parsed("published_at", fields.string("published_at"), ::Timestamp)
    val expiresAt = fields.optionalString("expires_at")?.let { fields.parsed("expires_at", it, ::Timestamp) }
    val channel = fields.parsed("channel", fields.string("channel"), ::ChannelName)
    val profile = fields.optionalString("profile") ?: "modelcast"
    fields.parsed("profile", profile) { checkPrintable(it, 32, "a profile name") }
    val minAppVersion = fields.optionalString("min_app_version")?.let { fields.parsed("min_app_version", it, ::AppVersion) }
    val meta = fields.optionalFields("meta")?.let { freeForm(JsonValue.Object(it.members), it.path) as JsonValue.Object }?.members ?: emptyMap()
    val replaces = if (fields.optionalLong("replaces") == null) null else sequence(fields, "replaces")
    val models = models(fields.fields("models"))
    val prototypes = fields.optionalFields("prototypes")?.let { decodeModel(it, "prototypes") }
    val rollback = fields.optionalFields("rollback")?.let { section -> ReleaseRollback(sequence(section, "sequence"), models(section.fields("models"))) }
    val rollout = fields.optionalFields("rollout")?.let(::decodeRollout)
    return Release(sequence, publishedAt, expiresAt, channel, profile, minAppVersion, meta, models, prototypes, rollback, rollout, replaces)
}

/** Every model of a `models` object, by name order. */
private fun models(fields: JsonFields): List<ReleaseModel> =
    fields.members.keys.sorted().map { name -> decodeModel(fields.fields(name), name) }

/** A sequence number: a whole number within 0…2^53. */
private fun sequence(fields: JsonFields, key: String): Long {
    val value = fields.long(key)
    if (value < 0 || value > ByteSize.MAXIMUM) throw ManifestValueException(fields.pathOf(key), value.toString(), "is not a sequence from 0 to 2^53")
    return value
}
