package dev.modelcast.client.format

import dev.modelcast.client.ClientError
import java.time.Duration

/**
 * A release as a device reads it: a `modelcast-manifest` (format version 1) with every value
 * parsed into a type that cannot hold a bad one. Only [decode] makes one, and it refuses the
 * whole manifest at the first bad value, so nothing that has not passed these types becomes
 * a path, a URL or a byte count.
 *
 * The manifest's `profile` field is any printable name (the profile the live manifest was
 * rendered with); the document is always modelcast's own format. The other profiles'
 * manifests (nomlens, tiers, catalog, latest) are not this format and are refused, as the
 * Swift client refuses them.
 */
class Release internal constructor(
    /** 0…2^53; higher than any release the device accepted before (checked by the caller). */
    val sequence: Long,
    val publishedAt: Timestamp,
    val expiresAt: Timestamp?,
    val channel: ChannelName,
    /** Printable ASCII, 1 to 32 characters (`modelcast` when the field is absent). */
    val profile: String,
    val minAppVersion: AppVersion?,
    /** Release-wide free-form metadata. */
    val meta: Map<String, JsonValue>,
    /** The models, by name order: during a staged rollout, the candidate. */
    val models: List<ReleaseModel>,
    /** Extra objects a profile publishes beside the models (the catalog's prototypes), named `prototypes`. */
    val prototypes: ReleaseModel?,
    /** The release devices fall back to: the one live before, or during a rollout the fallback. */
    val rollback: ReleaseRollback?,
    /** A staged rollout: [models] are the candidate, [rollback] the fallback. */
    val rollout: Rollout?,
    /** Sequence of the release live when this one was published (0…2^53), null for the first. */
    val replaces: Long?
) {
    /** The model named [name], or null. */
    fun model(name: String): ReleaseModel? = models.firstOrNull { it.name.text == name }

    /** How long the manifest is valid from its publish time (`expires_at` − `published_at`); null when it never expires. */
    val validityPeriod: Duration? get() = expiresAt?.let { Duration.between(publishedAt.instant, it.instant) }

    override fun toString(): String = "Release(sequence $sequence, channel $channel, models ${models.map { "${it.name} ${it.version}" }})"

    companion object {
        /** The `format` of a modelcast manifest. */
        const val FORMAT_NAME: String = "modelcast-manifest"

        /** The `format_version` this client reads. */
        const val FORMAT_VERSION: Long = 1

        /**
         * Reads the manifest [bytes] served at [url]. The caller bounds [bytes] first
         * (`ManifestLimits.MAX_BYTES`, or the app's configured limit).
         * @throws ClientError.InvalidManifest naming the first field that is not what a
         * manifest may hold (`models.m.files[0].sha256`), its value and the rule, or
         * `(document)` when the bytes are not JSON (or nest deeper than [ManifestLimits.MAX_DEPTH]).
         */
        @JvmStatic
        fun decode(bytes: ByteArray, url: String): Release {
            val document = try {
                Json.parse(bytes)
            } catch (error: JsonException) {
                throw ClientError.InvalidManifest(url, if (error.path.isEmpty()) "(document)" else error.path, null, error.reason + " (byte ${error.offset})")
            }
            return try {
                decodeRelease(document)
            } catch (error: ManifestValueException) {
                throw error.toClientError(url)
            }
        }
    }
}
