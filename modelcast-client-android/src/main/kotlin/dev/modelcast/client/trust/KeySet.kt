package dev.modelcast.client.trust

import dev.modelcast.client.format.ChannelName
import dev.modelcast.client.format.ManifestValueException
import dev.modelcast.client.format.Timestamp
import java.time.Instant
import java.time.temporal.ChronoUnit

/**
 * A key set: the document `keys/N.json` of a target, which names the root keys (offline;
 * they sign the next key set) and the manifest keys (online; they sign manifests), each
 * with a threshold, and an expiry. Version N+1 is trusted only when a threshold of version
 * N's root keys and a threshold of its own signed it ([KeySetChain.step]).
 *
 *     {
 *       "expires_at": "2027-11-29T00:00:00Z",
 *       "format": "modelcast-keys",
 *       "format_version": 1,
 *       "manifest": {"keys": ["RWQ…"], "threshold": 1},
 *       "root": {"keys": ["RWQ…", "RWQ…"], "threshold": 2},
 *       "sequence_floors": {"beta": 57, "stable": 41},
 *       "version": 2
 *     }
 *
 * A value of this type holds only what the rules allow: a [version] from 1 to 2^53, an
 * expiry in whole seconds (UTC, years 1 to 9999), two valid roles that share no key, and a
 * at most 64 channels' [sequenceFloors], each from 0 to 2^53. The Swift client's `KeySet`.
 *
 * @throws ManifestValueException naming the document field.
 */
class KeySet(
    /** The key set's version, 1…2^53. */
    val version: Long,
    expiresAt: Instant,
    /** The keys that sign the next key set, and how many must. */
    val root: KeySetRole,
    /** The keys that sign manifests, and how many must. */
    val manifest: KeySetRole,
    /**
     * Per channel name, the lowest manifest sequence a client accepts once this key set's
     * manifest keys replace keys it no longer lists ([KeySetChain.sequenceFloor]). Each
     * channel has its own sequence, so each has its own floor; a channel not named has
     * floor 0. Empty when the document has no `sequence_floors`.
     */
    val sequenceFloors: Map<String, Long> = emptyMap()
) {
    /** When the key set stops being trusted as the newest (whole seconds; a fraction given is dropped). */
    val expiresAt: Instant = expiresAt.truncatedTo(ChronoUnit.SECONDS)

    /** `expires_at` as the document writes it: `2027-11-29T00:00:00Z`. */
    val expiresAtText: String = Timestamp.format(this.expiresAt)

    init {
        if (version !in 1..MAX_NUMBER) throw ManifestValueException("version", version.toString(), "is not a key set version (1 to 2^53)")
        if (expiresAtText.length != 20 || expiresAtText.startsWith("0000") || Timestamp.parse(expiresAtText) != this.expiresAt) {
            throw ManifestValueException("expires_at", expiresAtText, "is not a time from year 0001 to 9999")
        }
        if (sequenceFloors.size > MAX_CHANNEL_FLOORS) {
            throw ManifestValueException("sequence_floors", "${sequenceFloors.size} channels", "names more than $MAX_CHANNEL_FLOORS channels")
        }
        for ((channel, floor) in sequenceFloors) {
            if (!ChannelName.isValid(channel)) {
                throw ManifestValueException("sequence_floors", channel,
                    "is not a channel name (lowercase letters, digits and '-', starting with a letter or digit, at most 64 characters)")
            }
            if (floor !in 0..MAX_NUMBER) throw ManifestValueException("sequence_floors.$channel", floor.toString(), "is not a manifest sequence (0 to 2^53)")
        }
        // A manifest key that is also a root key would let the machine that publishes (where
        // manifest keys live) sign key sets too: the leak the root role exists to survive.
        manifest.keys.forEachIndexed { index, key ->
            if (root.keys.any { it.keyId == key.keyId || it.key.contentEquals(key.key) }) {
                throw ManifestValueException("manifest.keys[$index]", key.base64, "is also a root key: root keys stay offline and sign only key sets")
            }
        }
    }

    /** The sequence floor of [channel]'s manifest: 0 when the document names no floor for it. */
    fun sequenceFloor(channel: String): Long = sequenceFloors[channel] ?: 0L

    /** Where this key set lives under a target's root: `keys/N.json`. */
    val path: String get() = path(version)

    /**
     * Whether the key set has expired at [now] (its expiry is not after [now]). Only the
     * newest key set a client trusts must be fresh: one a newer version replaced may have
     * expired since.
     */
    fun isExpired(now: Instant): Boolean = !expiresAt.isAfter(now)

    /**
     * Refuses a key set expired at [now] ([KeySetError.Expired]): a client that cannot reach a
     * fresh key set stops trusting the stale one rather than being frozen on it.
     */
    fun checkFresh(now: Instant) {
        if (isExpired(now)) throw KeySetError.Expired(path, expiresAtText, Timestamp.format(now))
    }

    /**
     * The document's canonical bytes, what `modelcast keys` writes and root keys sign (see
     * [KeySetCanonical]). Readers never re-derive them: they verify signatures over the bytes
     * as served.
     */
    fun canonicalBytes(): ByteArray = KeySetCanonical.bytes(this)

    override fun equals(other: Any?): Boolean = other is KeySet && other.version == version && other.expiresAt == expiresAt &&
        other.root == root && other.manifest == manifest && other.sequenceFloors == sequenceFloors
    override fun hashCode(): Int = version.hashCode() * 31 + expiresAt.hashCode()
    override fun toString(): String = "key set $version (expires $expiresAtText; root $root; manifest $manifest)"

    companion object {
        /** The `format` field's only value. */
        const val FORMAT_NAME = "modelcast-keys"
        /** The `format_version` this reader reads. */
        const val FORMAT_VERSION = 1L
        /** The largest document read, in bytes (64 KiB); a larger one is refused unparsed. */
        const val MAX_BYTES = 64 shl 10
        /** The highest version (and sequence floor): 2^53, exact in JSON and in a double. */
        const val MAX_NUMBER = 1L shl 53
        /** The most channels `sequence_floors` names. */
        const val MAX_CHANNEL_FLOORS = 64

        /**
         * Where key set [version] lives under a target's root: `keys/N.json` (plain decimal, so
         * a client builds the next one's URL without a listing).
         */
        @JvmStatic
        fun path(version: Long): String = "keys/$version.json"

        /**
         * Parses a `keys/N.json` document as served (the rules of [KeySetParser]).
         * @throws ManifestValueException naming the JSON path and the value.
         */
        @JvmStatic
        fun parse(bytes: ByteArray): KeySet = KeySetParser.parse(bytes)
    }
}
