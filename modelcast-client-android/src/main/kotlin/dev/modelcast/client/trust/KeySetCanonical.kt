package dev.modelcast.client.trust

import dev.modelcast.client.format.Json
import dev.modelcast.client.format.JsonValue

/**
 * A key set's canonical bytes, what `modelcast keys` writes and root keys sign: members
 * sorted by name, two-space indentation, `"key": value`, arrays one item per line, a line
 * feed at the end, ASCII only (every value of a key set is ASCII by its type) — what
 * Python's `json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=True) + "\n"` writes and
 * the Swift client's `KeySet.canonicalBytes`. Written directly rather than by a general
 * pretty-printer: the document's shape is fixed, and the members are listed here in sorted order.
 */
internal object KeySetCanonical {
    fun bytes(keySet: KeySet): ByteArray {
        val out = StringBuilder("{\n")
        val members = ArrayList<Pair<String, String>>()
        members.add("expires_at" to string(keySet.expiresAtText))
        members.add("format" to string(KeySet.FORMAT_NAME))
        members.add("format_version" to KeySet.FORMAT_VERSION.toString())
        members.add("manifest" to role(keySet.manifest))
        members.add("root" to role(keySet.root))
        if (keySet.sequenceFloors.isNotEmpty()) members.add("sequence_floors" to floors(keySet.sequenceFloors))
        members.add("version" to keySet.version.toString())
        members.forEachIndexed { index, (name, value) ->
            out.append("  ").append(string(name)).append(": ").append(value)
            out.append(if (index < members.size - 1) ",\n" else "\n")
        }
        return out.append("}\n").toString().toByteArray(Charsets.US_ASCII)
    }

    /** A role object, nested one level: its lines indented by 4 and its keys by 6. */
    private fun role(role: KeySetRole): String {
        val keys = role.keys.joinToString(",\n") { "      " + string(it.base64) }
        return "{\n    \"keys\": [\n$keys\n    ],\n    \"threshold\": ${role.threshold}\n  }"
    }

    /** The floors object, nested one level, members sorted by channel name. */
    private fun floors(floors: Map<String, Long>): String {
        val lines = floors.keys.sorted().joinToString(",\n") { "    " + string(it) + ": " + floors.getValue(it) }
        return "{\n$lines\n  }"
    }

    private fun string(text: String): String = Json.write(JsonValue.Text(text))
}
