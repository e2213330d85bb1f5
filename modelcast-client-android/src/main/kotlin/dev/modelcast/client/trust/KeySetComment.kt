package dev.modelcast.client.trust

import dev.modelcast.client.quoted

/**
 * The trusted comment every root signature of a key set carries:
 * `file:keys/N.json<TAB>keyset:N<TAB>expires:2027-11-29T00:00:00Z`. The comment is covered by
 * the signature's global signature, so a signature made for one version cannot be moved to
 * another (or to the same version re-issued with another expiry).
 */
object KeySetComment {
    /** The comment a root key signs [keySet] with. */
    @JvmStatic
    fun text(keySet: KeySet): String = "file:${keySet.path}\tkeyset:${keySet.version}\texpires:${keySet.expiresAtText}"

    /**
     * Why [comment] does not bind [keySet], or null when it does. The comment is
     * tab-separated `name:value` fields: `file`, `keyset` and `expires` must each appear once
     * with exactly the document's values; other fields (a signing time a later writer may
     * add) are allowed; a field given twice, or a part without `:`, makes the comment not
     * bind (unlike a manifest's comment, read leniently for older publishers: key set
     * comments have one writer and no history).
     */
    @JvmStatic
    fun mismatch(comment: String, keySet: KeySet): String? {
        val fields = HashMap<String, String>()
        for (part in comment.split('\t')) {
            val colon = part.indexOf(':')
            if (colon < 0) return "the trusted comment ${quoted(comment)} is not a key set signature's (tab-separated name:value fields)"
            val name = part.substring(0, colon)
            if (name in fields) return "the trusted comment ${quoted(comment)} gives ${quoted(name)} twice"
            fields[name] = part.substring(colon + 1)
        }
        val expected = listOf("file" to keySet.path, "keyset" to keySet.version.toString(), "expires" to keySet.expiresAtText)
        for ((name, value) in expected) {
            if (fields[name] != value) {
                val found = fields[name]?.let { quoted(it) } ?: "nothing"
                return "the signature's trusted comment says $name $found, the document ${quoted(value)} (a signature made for another key set)"
            }
        }
        return null
    }
}
