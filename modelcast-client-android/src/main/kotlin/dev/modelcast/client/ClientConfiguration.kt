package dev.modelcast.client

import dev.modelcast.client.format.AppVersion
import dev.modelcast.client.format.ChannelName
import dev.modelcast.client.format.DeviceProfile
import dev.modelcast.client.format.DownloadPolicy
import dev.modelcast.client.format.ManifestValueException
import dev.modelcast.client.format.ModelName
import dev.modelcast.client.trust.KeySet
import dev.modelcast.client.trust.ModelSigningPublicKey
import java.io.File
import java.net.URI
import java.net.URISyntaxException
import java.time.Instant

/**
 * How a [ModelUpdater] finds, trusts and keeps models. Immutable: change a value with
 * [copy]. [validate] (which [ModelUpdater]'s constructor calls) refuses a value the client
 * cannot use, naming it.
 */
data class ClientConfiguration @JvmOverloads constructor(
    /**
     * The channel's manifest: `https://cdn.example.com/models/manifest.json` for stable,
     * `…/channels/beta/manifest.json` for beta ([manifestUrl] builds it). `http://` or
     * `https://`, no user name or password.
     */
    val manifestUrl: String,
    /**
     * Where the client keeps its state, downloads and installed models: on Android a folder
     * of `Context.getNoBackupFilesDir()` (models can be downloaded again, so they stay out
     * of backups). The client adds `models/`, `downloads/`, `state.json` and `state.lock`
     * under it. Nothing outside it is ever written or deleted.
     */
    val directory: File,
    /**
     * A stable id of this device for staged rollouts (a random UUID kept from the first
     * launch is enough). It never leaves the device.
     */
    val deviceId: String,
    /**
     * Trusted minisign public keys (the `.pub` file's text or its base64 line). More than
     * one during a key rotation. With any key, an unsigned manifest is refused.
     */
    val publicKeys: List<String> = emptyList(),
    /**
     * The key OpenSSF model signatures must be made with. When set, every model version the
     * client is about to switch to must carry a `model_signature` whose bundle this key
     * verifies and whose statement lists exactly the version's files on disk; anything else
     * is refused before the switch. null: no model signature is fetched.
     */
    val modelSigningPublicKey: ModelSigningPublicKey? = null,
    /** The app's version, for `min_app_version`; null skips that gate. */
    val appVersion: String? = null,
    /** Install only these models of the manifest (null: every model). */
    val models: Set<String>? = null,
    /** Versions kept besides the current one, per model, for an instant local rollback. */
    val keepPreviousVersions: Int = 1,
    /** Largest manifest read (default 4 MiB); a larger one is refused and its connection closed within 64 KiB more. */
    val maxManifestBytes: Int = 4 shl 20,
    /**
     * Attempts per download after a dropped connection, a server error or a transfer
     * abandoned as too slow (each resumes). The manifest, its signature and a segment index
     * are not retried.
     */
    val retries: Int = 3,
    /** Seconds a request may wait for data before it counts as dropped: an idle timeout, which every byte resets. */
    val requestTimeoutSeconds: Double = 30.0,
    /**
     * Slow retrieval, bytes per second: a request whose body brings fewer than
     * `minimumTransferRate × transferRateWindowSeconds` bytes in any window from its start is
     * abandoned ([ClientError.TooSlow]) and its connection closed. 0 turns the check off.
     */
    val minimumTransferRate: Long = 1024,
    /** Seconds [minimumTransferRate] is measured over, each window from the request's start. */
    val transferRateWindowSeconds: Double = 30.0,
    /**
     * The longest a metadata request (the manifest, its signature, a segment index, a
     * model-signature bundle) may take from its start to its last byte, however fast its
     * bytes come ([ClientError.DeadlineExceeded]).
     */
    val metadataDeadlineSeconds: Double = 60.0,
    /**
     * The largest unpacked size of one model version the client installs
     * ([ClientError.InstallTooLarge]). null: no cap but the volume's free space, which is
     * checked before anything is unpacked too.
     */
    val maxInstallBytes: Long? = null,
    /**
     * Seconds a call waits for another process using [directory] (a second instance, a
     * worker in another process) to finish its update or revert, before it gives up with
     * [ClientError.DirectoryBusy]. 0: do not wait.
     */
    val directoryLockTimeoutSeconds: Double = 30.0,
    /**
     * The channel this app follows. The manifest must say it is this channel's (and a signed
     * one's trusted comment must name it). Defaults to the channel [manifestUrl] names in
     * modelcast's layout: NAME for `…/channels/NAME/manifest.json`, else `stable`.
     */
    val channel: String = channelOf(manifestUrl),
    /**
     * What this device is, for choosing among a model's variants: by default
     * [CurrentDevice.profile] (memory, platform, OS version, architecture). Override any
     * field: the capabilities the app declares, less memory to leave room for the app.
     */
    val device: DeviceProfile = CurrentDevice.profile,
    /** The app's download policy per model name, over the manifest's `download` (which defaults to prefetch). */
    val downloadPolicies: Map<String, DownloadPolicy> = emptyMap(),
    /**
     * Asked before an update downloads anything, with its plan: false defers the update,
     * which then downloads and changes nothing and returns [UpdateOutcome.Deferred]. Not
     * asked when nothing would be downloaded, nor by [ModelUpdater.request]. Called on the
     * updating thread. null: always go ahead. (Unmetered-network and battery rules belong in
     * the WorkManager constraints that start the update, or in [conditions] for the models whose
     * manifest entry sets `download_conditions`.)
     */
    val shouldDownload: ((UpdatePlan) -> Boolean)? = null,
    /** The clock (tests pin it): expiry and rollout schedules are judged by it. */
    val clock: () -> Instant = { Instant.now() },
    /**
     * The most bytes every installed version (each model's current and kept ones) may take,
     * null for no budget. An install that would pass it first evicts on-demand models (not in
     * use, [ModelUpdater.beginUse]; lowest storage priority, then least recently used first);
     * when that is not enough it is refused with [ClientError.OverStorageBudget], nothing evicted.
     */
    val storageBudget: Long? = null,
    /**
     * The network and charging state for models with `download_conditions` (both "not said"
     * by default: such a model waits). [ModelUpdater.setConditions] replaces it per call.
     */
    val conditions: DeviceConditions = DeviceConditions(),
    /**
     * The key set the app ships (`keys/N.json` as published, byte for byte), instead of
     * [publicKeys] (both set is refused). Each check walks the target's newer key sets from
     * it (or from the newest one verified before, kept in `state.json`), at most
     * [dev.modelcast.client.trust.KeySetChain.MAX_VERSIONS_PER_CHECK] per check, and proves
     * the manifest by the newest set's manifest keys and threshold.
     */
    val trustedKeySet: ByteArray? = null
) {
    /**
     * The values the client refuses to start with, named ([ClientError.Configuration]).
     * [ModelUpdater]'s constructor calls it; an app or tool that stores a configuration calls
     * it first, to refuse a bad value before anything is written.
     */
    fun validate() {
        val uri = try { URI(manifestUrl) } catch (error: URISyntaxException) { null }
        val scheme = uri?.scheme.orEmpty()
        if (uri == null || !(scheme.equals("http", ignoreCase = true) || scheme.equals("https", ignoreCase = true)) || uri.host.isNullOrEmpty()) {
            throw ClientError.Configuration("manifestUrl ${quoted(manifestUrl)} is not an http or https URL")
        }
        if (uri.rawUserInfo != null) throw ClientError.Configuration("manifestUrl carries a user name or password")
        if (!parses { ChannelName(channel) }) {
            throw ClientError.Configuration("channel ${quoted(channel)} is not a channel name (lowercase letters, digits and '-')")
        }
        if (directory.path.isEmpty()) throw ClientError.Configuration("directory is empty")
        if (appVersion != null && !parses { AppVersion(appVersion) }) {
            throw ClientError.Configuration("appVersion ${quoted(appVersion)} is not an app version (e.g. 5.2, 1.4.0, 1.0.0.123)")
        }
        for (name in models.orEmpty().sorted()) {
            if (!ModelName.isValid(name)) throw ClientError.Configuration("models names ${quoted(name)}, which is not a model name")
        }
        for (name in downloadPolicies.keys.sorted()) {
            if (!ModelName.isValid(name)) throw ClientError.Configuration("downloadPolicies names ${quoted(name)}, which is not a model name")
        }
        if (keepPreviousVersions < 0 || retries < 0 || maxManifestBytes <= 0 || !(requestTimeoutSeconds > 0)) {
            throw ClientError.Configuration("keepPreviousVersions and retries must not be negative, maxManifestBytes and requestTimeoutSeconds must be positive")
        }
        if (minimumTransferRate < 0 || !(transferRateWindowSeconds > 0) || !(metadataDeadlineSeconds > 0) || (maxInstallBytes ?: 1) <= 0) {
            throw ClientError.Configuration("minimumTransferRate must not be negative; transferRateWindowSeconds, metadataDeadlineSeconds and maxInstallBytes must be positive")
        }
        shippedKeySet()
        if (storageBudget != null && storageBudget < 0) throw ClientError.Configuration("storageBudget $storageBudget must not be negative")
        if (!(directoryLockTimeoutSeconds >= 0) || directoryLockTimeoutSeconds.isInfinite()) {
            throw ClientError.Configuration("directoryLockTimeoutSeconds $directoryLockTimeoutSeconds must be a number of seconds, 0 or more")
        }
    }

    /**
     * [trustedKeySet], parsed; null when none is configured. Refuses one that is no key set,
     * and one configured together with [publicKeys] (a key set names the manifest keys itself).
     */
    internal fun shippedKeySet(): KeySet? {
        val bytes = trustedKeySet ?: return null
        if (publicKeys.isNotEmpty()) throw ClientError.Configuration("trustedKeySet and publicKeys are both set: a key set names the manifest keys itself")
        return try { KeySet.parse(bytes) } catch (error: Exception) {
            throw ClientError.Configuration("trustedKeySet is not a key set: ${error.message}")
        }
    }

    /** True when [make] builds its value ([ManifestValueException] is how a value type refuses). */
    private inline fun parses(make: () -> Any): Boolean = try { make(); true } catch (error: ManifestValueException) { false }

    companion object {
        /**
         * The manifest URL of [channel] under a target's base URL (ending in `/` or not):
         * `manifest.json` for stable, `channels/NAME/manifest.json` for any other (the layout
         * `modelcast publish --channel` writes).
         */
        @JvmStatic
        @JvmOverloads
        fun manifestUrl(base: String, channel: String = "stable", manifestKey: String = "manifest.json"): String {
            val root = if (base.endsWith("/")) base else "$base/"
            return if (channel == "stable") root + manifestKey else root + "channels/" + channel + "/" + manifestKey
        }

        /** The channel a manifest URL names in modelcast's layout: NAME for `…/channels/NAME/<manifest>`, else `stable`. */
        @JvmStatic
        fun channelOf(manifestUrl: String): String {
            val path = try { URI(manifestUrl).rawPath } catch (error: URISyntaxException) { null } ?: return "stable"
            val parts = path.split("/")
            if (parts.size < 3 || parts[parts.size - 3] != "channels") return "stable"
            return parts[parts.size - 2]
        }
    }
}
