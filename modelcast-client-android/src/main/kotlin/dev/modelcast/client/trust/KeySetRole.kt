package dev.modelcast.client.trust

import dev.modelcast.client.format.ManifestValueException

/**
 * Which role of a key set a key belongs to: the offline keys that sign key sets, or the
 * online keys that sign manifests. [fieldName] is the role's field in the document.
 */
enum class KeySetRoleName(val fieldName: String) {
    /** The offline keys that sign the next key set (`root`). */
    ROOT("root"),
    /** The keys that sign manifests (`manifest`), held where publishing runs. */
    MANIFEST("manifest");

    override fun toString(): String = fieldName
}

/**
 * The keys of one role of a key set and how many of them must sign: 1 to [MAX_KEYS] minisign
 * public keys, no two with the same key id or the same key bytes, none a key
 * [MinisignPublicKey] refuses (small order, non-canonical: it cannot hold one), and a
 * [threshold] from 1 to the number of keys.
 *
 * @throws ManifestValueException naming the field under [field] (`root.keys[1]`).
 */
class KeySetRole(keys: List<MinisignPublicKey>, val threshold: Int, field: String = "role") {
    /** The role's keys, in the document's order. */
    val keys: List<MinisignPublicKey> = keys.toList()

    init {
        if (this.keys.size !in 1..MAX_KEYS) {
            throw ManifestValueException("$field.keys", null, "has ${this.keys.size} keys; a role has 1 to $MAX_KEYS")
        }
        this.keys.forEachIndexed { index, key ->
            // A key listed twice under two key ids would let one secret count as two signers
            // (the key id of a signature is not covered by the signature).
            val first = this.keys.subList(0, index).indexOfFirst { it.keyId == key.keyId || it.key.contentEquals(key.key) }
            if (first >= 0) {
                throw ManifestValueException("$field.keys[$index]", key.base64,
                    "repeats $field.keys[$first] (same key id or same key): each key counts once")
            }
        }
        if (threshold !in 1..this.keys.size) {
            throw ManifestValueException("$field.threshold", threshold.toString(), "is not from 1 to the number of keys (${this.keys.size})")
        }
    }

    /** The role's key with [keyId], if it lists one. */
    fun key(keyId: MinisignKeyId): MinisignPublicKey? = keys.firstOrNull { it.keyId == keyId }

    /** Whether the role lists [key] (its key id and key bytes). */
    operator fun contains(key: MinisignPublicKey): Boolean = keys.contains(key)

    override fun equals(other: Any?): Boolean = other is KeySetRole && other.keys == keys && other.threshold == threshold
    override fun hashCode(): Int = keys.hashCode() * 31 + threshold
    override fun toString(): String = "$threshold of ${keys.joinToString(", ") { it.keyId.hex }}"

    companion object {
        /** The most keys a role lists. */
        const val MAX_KEYS = 16
    }
}
