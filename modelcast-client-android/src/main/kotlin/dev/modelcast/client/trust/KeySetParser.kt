package dev.modelcast.client.trust

import dev.modelcast.client.format.ChannelName
import dev.modelcast.client.format.JsonValue
import dev.modelcast.client.format.ManifestValueException
import dev.modelcast.client.format.StrictJson
import dev.modelcast.client.format.Timestamp

/**
 * Reads a `keys/N.json` document as served into a [KeySet]. Refuses, naming the JSON path
 * and the value: more than [KeySet.MAX_BYTES] (before parsing), anything [StrictJson]
 * refuses (a repeated key, a number written as a fraction…), a missing or unknown field (a
 * new field is a new `format_version`, never read past silently), a value of the wrong type,
 * and every rule of [KeySet] and [KeySetRole]. Keys must be spelled exactly as `minisign -G`
 * writes them (one base64 line, nothing around it), `expires_at` exactly as
 * [Timestamp.format] writes it (`2027-11-29T00:00:00Z`). Fields are checked in the Swift
 * client's order, so both name the same field when a document breaks several rules.
 */
internal object KeySetParser {
    /** The document's fields, in the order the canonical writer puts them (sorted). */
    val FIELD_NAMES = listOf("expires_at", "format", "format_version", "manifest", "root", "sequence_floors", "version")
    val ROLE_FIELD_NAMES = listOf("keys", "threshold")

    fun parse(bytes: ByteArray): KeySet {
        if (bytes.size > KeySet.MAX_BYTES) {
            throw ManifestValueException(StrictJson.DOCUMENT, null, "has ${bytes.size} bytes, more than a key set may have (${KeySet.MAX_BYTES})")
        }
        val fields = members(StrictJson.parse(bytes), StrictJson.DOCUMENT, FIELD_NAMES, "a key set")
        val format = string(fields["format"], "format")
        if (format != KeySet.FORMAT_NAME) {
            throw ManifestValueException("format", format, "is not \"${KeySet.FORMAT_NAME}\" (this is not a modelcast key set)")
        }
        val formatVersion = integer(fields["format_version"], "format_version")
        if (formatVersion != KeySet.FORMAT_VERSION) {
            throw ManifestValueException("format_version", formatVersion.toString(),
                "is a key set format this reader does not know (it reads format_version ${KeySet.FORMAT_VERSION})")
        }
        val version = integer(fields["version"], "version")
        val expiresText = string(fields["expires_at"], "expires_at")
        val expiresAt = Timestamp.parse(expiresText)?.takeIf { Timestamp.format(it) == expiresText }
            ?: throw ManifestValueException("expires_at", expiresText,
                "is not a UTC time in whole seconds as RFC 3339 writes it (e.g. 2027-11-29T00:00:00Z)")
        val root = role(fields["root"], "root")
        val manifest = role(fields["manifest"], "manifest")
        val floors = fields["sequence_floors"]?.let { floors(it) } ?: emptyMap()
        return KeySet(version, expiresAt, root, manifest, floors)
    }

    /** `sequence_floors`: an object of channel name to floor (names checked by [KeySet]). */
    private fun floors(value: JsonValue): Map<String, Long> {
        val members = (value as? JsonValue.Object)?.members
            ?: throw ManifestValueException("sequence_floors", describe(value), "is not an object of channel names to sequences")
        if (members.size > KeySet.MAX_CHANNEL_FLOORS) {
            throw ManifestValueException("sequence_floors", "${members.size} channels", "names more than ${KeySet.MAX_CHANNEL_FLOORS} channels")
        }
        val floors = LinkedHashMap<String, Long>()
        for ((channel, floor) in members) {
            if (!ChannelName.isValid(channel)) {
                throw ManifestValueException("sequence_floors", channel,
                    "is not a channel name (lowercase letters, digits and '-', starting with a letter or digit, at most 64 characters)")
            }
            floors[channel] = integer(floor, "sequence_floors.$channel")
        }
        return floors
    }

    private fun members(value: JsonValue, field: String, known: List<String>, what: String): Map<String, JsonValue> {
        val members = (value as? JsonValue.Object)?.members ?: throw ManifestValueException(field, describe(value), "is not $what (a JSON object)")
        for (key in members.keys) {
            if (key !in known) {
                val path = if (field == StrictJson.DOCUMENT) key else "$field.$key"
                throw ManifestValueException(path, key, "is not a field of $what in format_version ${KeySet.FORMAT_VERSION} (it has ${known.joinToString(", ")})")
            }
        }
        return members
    }

    private fun role(value: JsonValue?, field: String): KeySetRole {
        val fields = members(present(value, field), field, ROLE_FIELD_NAMES, "a role")
        val listed = present(fields["keys"], "$field.keys")
        val items = (listed as? JsonValue.Array)?.items ?: throw ManifestValueException("$field.keys", describe(listed), "is not a list of minisign public keys")
        // Counted before any key is decoded: a huge list costs nothing.
        if (items.size > KeySetRole.MAX_KEYS) throw ManifestValueException("$field.keys", null, "has ${items.size} keys; a role has 1 to ${KeySetRole.MAX_KEYS}")
        val keys = items.mapIndexed { index, item ->
            val path = "$field.keys[$index]"
            val text = string(item, path)
            val key = try {
                MinisignPublicKey.fromBase64(text, path)
            } catch (error: TrustError.SigningKey) {
                throw ManifestValueException(path, text, "is not a minisign public key to trust: ${error.reason}")
            }
            // One spelling per key (no surrounding spaces, no non-zero padding bits): the signed
            // bytes must be the only way to write the document.
            if (key.base64 != text) {
                throw ManifestValueException(path, text, "is not written as minisign writes a public key (one base64 line, nothing around it)")
            }
            key
        }
        val threshold = integer(fields["threshold"], "$field.threshold")
        return KeySetRole(keys, threshold.coerceIn(Int.MIN_VALUE.toLong(), Int.MAX_VALUE.toLong()).toInt(), field)
    }

    private fun present(value: JsonValue?, field: String): JsonValue = value ?: throw ManifestValueException(field, null, "is required")

    private fun string(value: JsonValue?, field: String): String {
        val present = present(value, field)
        return (present as? JsonValue.Text)?.value ?: throw ManifestValueException(field, describe(present), "is not a string")
    }

    /** Only an integer literal: `2.0` and `2e0` are refused, unlike a manifest's integer fields. */
    private fun integer(value: JsonValue?, field: String): Long {
        val present = present(value, field)
        return (present as? JsonValue.Integer)?.value
            ?: throw ManifestValueException(field, describe(present), "is not a whole number written without a fraction or exponent")
    }

    /** A value as an error shows it: a string as itself (quoted when shown), the rest as compact JSON, cut. */
    private fun describe(value: JsonValue): String {
        if (value is JsonValue.Text) return value.value
        val text = value.toString()
        return if (text.length > 80) text.take(80) + "…" else text
    }
}
