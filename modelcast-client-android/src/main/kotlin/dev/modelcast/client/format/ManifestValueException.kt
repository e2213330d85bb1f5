package dev.modelcast.client.format

import dev.modelcast.client.ClientError
import dev.modelcast.client.quoted

/**
 * A manifest value refused by the type that would hold it: [field] is its JSON path
 * (`models.m.files[0].sha256`; empty when a type's constructor was called directly and does
 * not know where the value sits), [value] the offending text as found (null when the rule is
 * about the shape, not one text: an empty list, a count), [reason] the rule it breaks.
 *
 * The value types of this package throw it (they do not know the manifest's URL);
 * [Release.decode] turns it into [ClientError.InvalidManifest] with [toClientError].
 */
class ManifestValueException(val field: String, val value: String?, val reason: String) :
    IllegalArgumentException((if (field.isEmpty()) "" else "$field ") + (value?.let { quoted(it) + " " } ?: "") + reason) {

    /** The same refusal, found at [field]. */
    fun at(field: String): ManifestValueException = ManifestValueException(field, value, reason)

    /** The same refusal under [prefix]: `prefix` when this names no field, else `prefix.field`. */
    fun within(prefix: String): ManifestValueException = at(if (field.isEmpty()) prefix else "$prefix.$field")

    /** The client's error for the manifest at [url]. */
    fun toClientError(url: String): ClientError.InvalidManifest = ClientError.InvalidManifest(url, field, value, reason)
}
