package dev.modelcast.client

import dev.modelcast.client.format.DownloadPolicy
import dev.modelcast.client.format.LicenceTerms
import dev.modelcast.client.format.ModelName
import dev.modelcast.client.install.ClientState
import dev.modelcast.client.install.DirectoryLock
import dev.modelcast.client.install.Installer
import dev.modelcast.client.install.reportUnusable
import dev.modelcast.client.net.Cancellation
import dev.modelcast.client.net.Downloader
import dev.modelcast.client.net.HttpStream
import dev.modelcast.client.net.TransferBounds
import dev.modelcast.client.net.ioReason
import java.io.Closeable
import java.io.IOException
import java.net.HttpURLConnection
import java.net.URL
import java.nio.file.Files
import java.nio.file.Path
import java.util.concurrent.CancellationException
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.TimeUnit
import java.util.concurrent.locks.ReentrantLock

/**
 * The app side of modelcast: checks the manifest, downloads, proves and installs models, and
 * obeys rollbacks and staged rollouts; picks each model's variant for this device
 * ([ClientConfiguration.device]), follows download policies ([update], [request]), and goes
 * back to a kept version when the app reports one unusable ([reportUnusable]). One instance
 * per manifest (channel); [close] it when done.
 *
 *     val updater = ModelUpdater(configuration)
 *     val outcome = updater.update()                     // in a coroutine (a CoroutineWorker)
 *     val model = updater.installed("tiny-llm")?.mainFile
 *
 * Every operation has a blocking form (`updateBlocking`, for a plain thread or Java) and a
 * `suspend` form that runs it on [kotlinx.coroutines.Dispatchers.IO] and stops it when its
 * coroutine is cancelled.
 *
 * Its contract (the Swift client's):
 * - No manifest, signed or not, makes it read, write or delete outside
 *   [ClientConfiguration.directory]: every value is parsed before anything touches the
 *   disk, and paths are built from the parsed values only.
 * - [update], [request] and [check] run one at a time: a second call waits for the first.
 *   So do calls from other processes or other updaters on the same directory: each holds
 *   the directory's lock (`state.lock`), and waits for it at most
 *   [ClientConfiguration.directoryLockTimeoutSeconds], then throws [ClientError.DirectoryBusy].
 *   [reportUnusable] does not wait for an update of this process: it is offline and instant.
 * - Cancelling (the coroutine, a [Cancellation], an interrupt) stops network and disk work
 *   at once, keeps a partial download for the next attempt, and leaves the installed models
 *   as they were; it throws [CancellationException]. Every other failure is a [ClientError].
 * - [installed] and [installedModels] read the disk alone: they work offline, and after a
 *   crash or a lost `state.json`.
 */
class ModelUpdater @JvmOverloads constructor(
    val configuration: ClientConfiguration,
    /**
     * Opens each request's connection: the app's seam for a proxy, its own TLS settings
     * (certificate pinning through `HttpsURLConnection.setSSLSocketFactory`) or a
     * User-Agent. The client sets its own timeouts, headers and redirect handling on it.
     * null: `URL.openConnection()`.
     */
    openConnection: ((URL) -> HttpURLConnection)? = null
) : Closeable {
    internal val directory: Path
    internal val installer: Installer
    internal val http: HttpStream
    internal val downloader: Downloader
    internal val statePath: Path
    internal val licences: LicenceStore
    internal val use: ModelUse
    @Volatile
    private var reportedConditions: DeviceConditions? = null
    private val listeners = CopyOnWriteArrayList<ProgressListener>()
    /** Calls of this updater take turns, first come first served. */
    private val turns = ReentrantLock(true)

    /** What the last update or request downloaded, file by file (empty when it downloaded nothing). */
    @Volatile
    var lastDownloads: List<FileDownload> = emptyList()
        internal set

    init {
        configuration.validate()
        directory = configuration.directory.toPath()
        try {
            Files.createDirectories(directory)
        } catch (error: IOException) {
            throw ClientError.Io(directory.toString(), ioReason(error))
        }
        installer = Installer(directory, configuration.maxInstallBytes)
        http = HttpStream(TransferBounds(
            connectTimeoutSeconds = configuration.requestTimeoutSeconds, idleTimeoutSeconds = configuration.requestTimeoutSeconds,
            minimumRate = configuration.minimumTransferRate, windowSeconds = configuration.transferRateWindowSeconds,
            metadataDeadlineSeconds = configuration.metadataDeadlineSeconds),
            openConnection = openConnection ?: { url -> url.openConnection() as HttpURLConnection })
        downloader = Downloader(directory.resolve("downloads"), http, configuration.retries)
        statePath = directory.resolve("state.json")
        licences = LicenceStore(directory.resolve(LicenceStore.FILE_NAME))
        use = ModelUse(directory.resolve(ModelUse.FILE_NAME))
    }

    // -- what the app tells the client ----------------------------------------------------

    /** The network and charging state calls judge `download_conditions` by: the last [setConditions], else [ClientConfiguration.conditions]. */
    val conditions: DeviceConditions get() = reportedConditions ?: configuration.conditions

    /** Tells the client the device's network and charging state now (each call from now on judges by it). */
    fun setConditions(conditions: DeviceConditions) {
        reportedConditions = conditions
    }

    /**
     * Records that the app's user accepted [licence] for [model] (`licences.json` in the
     * client's directory, written atomically): from now on the model downloads while the
     * manifest names exactly these terms (SPDX id and URL). Terms the manifest changes ask
     * again ([UpdatePlan.waiting] holds the terms to show). Makes no request.
     * @throws ClientError.Configuration for a name that is no model name; [ClientError.Io].
     */
    fun acceptLicence(model: String, licence: LicenceTerms) {
        if (!ModelName.isValid(model)) throw ClientError.Configuration("acceptLicence: ${quoted(model)} is not a model name")
        licences.accept(model, licence)
    }

    /** The licence terms accepted, per model (the last accepted for each). Reads the disk only. */
    fun acceptedLicences(): Map<String, LicenceTerms> = licences.accepted()

    /**
     * The app starts using [model]: until the matching [endUse] (counted: nested uses hold it)
     * no storage-budget eviction takes it, and its last-use time (kept across launches, in
     * `usage.json`) makes it the last of its priority to go.
     */
    fun beginUse(model: String) {
        use.begin(model, configuration.clock().toEpochMilli())
    }

    /** The app stopped using [model] (one [beginUse] ended). */
    fun endUse(model: String) {
        use.end(model)
    }

    /** Tells [listener] the download progress of every update from now on (on the updating thread). */
    fun addProgressListener(listener: ProgressListener) {
        listeners.add(listener)
    }

    fun removeProgressListener(listener: ProgressListener) {
        listeners.remove(listener)
    }

    internal fun report(progress: UpdateProgress) {
        for (listener in listeners) listener.onProgress(progress)
    }

    /** Stops the HTTP client's threads; call it once no call is under way. */
    override fun close() {
        http.close()
    }

    // -- reading the disk -----------------------------------------------------------------

    /** The version of [name] in use, if one is installed. Reads the disk only (offline, and after a crash). */
    fun installed(name: String): InstalledModel? = if (ModelName.isValid(name)) installer.installed(name) else null

    /** Every model installed, by name. Reads the disk only. */
    fun installedModels(): List<InstalledModel> = installer.installedModels()

    // -- blocking calls -------------------------------------------------------------------

    /**
     * Fetches and proves the manifest and says what [updateBlocking] with [policy] would do,
     * without downloading anything. null when the manifest has not changed since an update
     * that covered at least the same models.
     */
    @JvmOverloads
    fun checkBlocking(policy: DownloadPolicy = DownloadPolicy.ON_DEMAND, cancellation: Cancellation? = null): UpdatePlan? =
        exclusively(cancellation) {
            val state = loadState()
            val checked = acceptedManifest(state, UpdateScope.Policy(policy), cancellation) ?: return@exclusively null
            plan(checked.release, state, UpdateScope.Policy(policy)).plan
        }

    /**
     * Checks the manifest and, when it names other versions than those installed, downloads,
     * proves and installs the models [policy] covers:
     * - [DownloadPolicy.ESSENTIAL]: the models whose policy is essential.
     * - [DownloadPolicy.PREFETCH]: the essential and prefetch models, and the on-demand models
     *   this device has installed ([requestBlocking]): once requested, a model is kept up to date.
     * - [DownloadPolicy.ON_DEMAND] (the default): every model.
     *
     * A model's policy is the app's ([ClientConfiguration.downloadPolicies]), else the
     * manifest's `download`, else prefetch. Models the call does not cover are left as they
     * are; models the manifest no longer names are removed. Before anything is downloaded,
     * [ClientConfiguration.shouldDownload] is asked. A failure leaves every installed model
     * as it was.
     */
    @JvmOverloads
    fun updateBlocking(policy: DownloadPolicy = DownloadPolicy.ON_DEMAND, cancellation: Cancellation? = null): UpdateOutcome =
        exclusively(cancellation) { performUpdate(UpdateScope.Policy(policy), cancellation) }

    /**
     * Downloads, proves and installs the model [name] now (an on-demand one, typically) and
     * returns it. From then on prefetch and on-demand updates keep it up to date. The
     * manifest is fetched whole (never a 304); other models are left as they are; installed at
     * that version already, it is returned without a download. [ClientConfiguration.shouldDownload]
     * is not asked. When the device meets none of the model's variants, the version installed
     * is returned, or [ClientError.NoVariantForDevice] thrown; a version refused by
     * [reportUnusableBlocking] is not installed again. A name the manifest does not have
     * throws [ClientError.UnknownModel].
     */
    @JvmOverloads
    fun requestBlocking(name: String, cancellation: Cancellation? = null): InstalledModel {
        val url = configuration.manifestUrl
        if (!ModelName.isValid(name)) throw ClientError.UnknownModel(url, name)
        val wanted = configuration.models
        if (wanted != null && name !in wanted) throw ClientError.Configuration("models does not name ${quoted(name)}, so it cannot be requested")
        return exclusively(cancellation) {
            val scope = UpdateScope.Model(name)
            val state = loadState()
            // No If-None-Match is sent: only a broken server answers 304.
            val checked = acceptedManifest(state, scope, cancellation) ?: throw ClientError.Http(url, 304)
            val planned = plan(checked.release, state, scope)
            if (planned.plan.policies[name] == null) throw ClientError.UnknownModel(url, name)
            val choice = planned.plan.variants[name]
            if (choice != null && choice.chosen == null && installer.installed(name) == null) {
                throw ClientError.NoVariantForDevice(name, choice.skipped.map { "${it.variant}: ${it.reasons.joinToString(", ")}" })
            }
            planned.plan.waiting[name]?.let { reason -> throw waitingError(name, reason) }
            apply(planned, checked, scope, cancellation)
            installer.installed(name) ?: throw ClientError.NotInstalled(name)
        }
    }

    /**
     * Reports that the version of [model] in use does not work on this device (it crashes,
     * or its results are wrong): switches the model back to the previous version kept
     * ([ClientConfiguration.keepPreviousVersions]) at once, without the network, and refuses
     * the reported version until the manifest names another one for the model (kept in
     * `state.json`; updates say why in [UpdatePlan.refused]). It does not wait for an update
     * under way in this process (that update keeps the switch and does not install the
     * refused version); a call of another process it waits for.
     *
     * @return the version now in use.
     * @throws ClientError.NotInstalled, [ClientError.NoPreviousVersion] (nothing changes then),
     *   [ClientError.Io], [ClientError.DirectoryBusy].
     */
    @JvmOverloads
    fun reportUnusableBlocking(model: String, reason: String, cancellation: Cancellation? = null): InstalledModel =
        installer.reportUnusable(model, reason, configuration.manifestUrl, statePath, configuration.directoryLockTimeoutSeconds, cancellation)

    /**
     * The state of [ClientConfiguration.directory], from the disk and `state.json` alone (no
     * request, nothing written): the sequence trusted and every installed model with its
     * files hashed now (one read of the installed bytes), kept versions and refusal.
     * @throws ClientError.Io when an installed file cannot be read.
     */
    fun installedStateBlocking(): InstalledState = readInstalledState()

    // -- suspending calls -------------------------------------------------------------------

    /** [checkBlocking] on [kotlinx.coroutines.Dispatchers.IO], cancelled with its coroutine. */
    suspend fun check(policy: DownloadPolicy = DownloadPolicy.ON_DEMAND): UpdatePlan? = cancellable { checkBlocking(policy, it) }

    /** [updateBlocking] on [kotlinx.coroutines.Dispatchers.IO], cancelled with its coroutine. */
    suspend fun update(policy: DownloadPolicy = DownloadPolicy.ON_DEMAND): UpdateOutcome = cancellable { updateBlocking(policy, it) }

    /** [requestBlocking] on [kotlinx.coroutines.Dispatchers.IO], cancelled with its coroutine. */
    suspend fun request(name: String): InstalledModel = cancellable { requestBlocking(name, it) }

    /** [reportUnusableBlocking] on [kotlinx.coroutines.Dispatchers.IO]. */
    suspend fun reportUnusable(model: String, reason: String): InstalledModel = cancellable { reportUnusableBlocking(model, reason, it) }

    /** [installedStateBlocking] on [kotlinx.coroutines.Dispatchers.IO]. */
    suspend fun installedState(): InstalledState = cancellable { installedStateBlocking() }

    // -- the work ---------------------------------------------------------------------------

    /**
     * Runs [body] after every call of this updater that came before it has finished, holding
     * the directory's lock ([DirectoryLock]): another process, or another updater on the same
     * directory, waits for it, and [body] reads the state only once the lock is taken.
     */
    private fun <T> exclusively(cancellation: Cancellation?, body: () -> T): T {
        try {
            while (!turns.tryLock(50, TimeUnit.MILLISECONDS)) cancellation?.throwIfCancelled()
        } catch (interrupted: InterruptedException) {
            Thread.currentThread().interrupt()
            throw CancellationException("interrupted")
        }
        try {
            cancellation?.throwIfCancelled()
            val lock = DirectoryLock.acquire(directory, configuration.directoryLockTimeoutSeconds, cancellation)
            try {
                return body()
            } finally {
                lock.release()
            }
        } finally {
            turns.unlock()
        }
    }

    private fun performUpdate(scope: UpdateScope, cancellation: Cancellation?): UpdateOutcome {
        val state = loadState()
        val checked = acceptedManifest(state, scope, cancellation) ?: return UpdateOutcome.NotModified
        val planned = plan(checked.release, state, scope)
        val shouldDownload = configuration.shouldDownload
        if (planned.plan.bytesToDownload > 0 && shouldDownload != null) {
            val goAhead = shouldDownload(planned.plan)
            cancellation?.throwIfCancelled()
            if (!goAhead) {
                lastDownloads = emptyList()
                return UpdateOutcome.Deferred(planned.plan)
            }
        }
        return apply(planned, checked, scope, cancellation)
    }

    /**
     * Downloads and proves what [planned] installs, builds the versions, switches the links
     * and saves the state, then tidies up. Everything is downloaded and proven before anything
     * is installed; with a pinned model-signing key, each version's signature first, its files
     * once staged.
     */
    private fun apply(planned: Planned, manifest: CheckedManifest, scope: UpdateScope, cancellation: Cancellation?): UpdateOutcome {
        val url = configuration.manifestUrl
        val release = manifest.release
        checkInstallCap(planned.installs)
        planned.overBudget?.let { throw it }
        checkSpaceBeforeDownload(planned.installs)
        evict(planned.plan.evictions)
        val statements = modelSignatureStatements(planned.installs, cancellation)
        val fetched = download(planned.installs, cancellation)
        checkRoom(planned.installs, fetched.files)
        val built = HashMap<String, Path>()
        for (model in planned.installs) {
            val statement = statements[model.name.text]
            val verify: ((Path) -> Unit)? = statement?.let { { version: Path -> ModelSignatures.compare(it, model, version) } }
            built[model.name.text] = installer.build(model.installVersion(fetched.indexes), fetched.files, url, release.sequence, verify, cancellation)
        }
        for (model in planned.covered) {
            if (built.containsKey(model.name.text)) continue
            val current = installer.current(model.name.text)
            if (current != null && current.fileName.toString() == model.versionId) installer.label(current, model.variant?.text)
        }
        cancellation?.throwIfCancelled()
        if (Thread.currentThread().isInterrupted) throw CancellationException("interrupted")
        // `reportUnusable` may have switched a model while this update waited on the network:
        // the state is read again, and a version refused since is not installed.
        val state = loadState()
        val installs = planned.installs.filter { model ->
            val id = model.versionId
            state.refused[model.name.text]?.id != id && installer.current(model.name.text)?.fileName?.toString() != id
        }
        val (changed, switched) = switchModels(installs, built, state) { next ->
            var updated = next.copy(sequences = next.sequences + (url to Math.max(next.sequences[url] ?: release.sequence, release.sequence)))
            if (scope is UpdateScope.Policy) {
                updated = updated.copy(
                    etags = if (manifest.etag != null) updated.etags + (url to manifest.etag) else updated.etags - url,
                    trusted = updated.trusted + (url to ClientState.Trusted(manifest.expiresAt)),
                    coverage = updated.coverage + (url to ClientState.Coverage(scope.policy.wireName, coverageContext)))
            }
            // A model that waits (a licence, a condition) must be looked at again: no 304 may stand for this manifest.
            if (planned.plan.waiting.isNotEmpty()) updated = updated.copy(etags = updated.etags - url, coverage = updated.coverage - url)
            // A refusal holds until the manifest names another version of the model.
            val lifted = planned.covered.filter { model -> updated.refused[model.name.text].let { it != null && it.id != model.versionId } }
            updated.copy(refused = updated.refused - lifted.map { it.name.text })
        }
        tidy(release, planned, scope, switched)
        val waiting = planned.plan.waiting
        return if (changed.isEmpty()) UpdateOutcome.UpToDate(release.sequence, waiting) else UpdateOutcome.Updated(release.sequence, changed, waiting)
    }

    /**
     * The switch: every model's link, then the state ([finish] completes it). If any step
     * fails, the links already switched go back, so a failed update leaves every model as it
     * was. Returns the models switched (name → version) and the state saved.
     */
    private fun switchModels(models: List<dev.modelcast.client.format.ReleaseModel>, built: Map<String, Path>, before: ClientState,
                             finish: (ClientState) -> ClientState): Pair<Map<String, String>, ClientState> {
        val changed = LinkedHashMap<String, String>()
        val switched = ArrayList<Pair<String, Path?>>()
        var state = before
        try {
            for (model in models) {
                val name = model.name.text
                val previous = installer.current(name)
                state = installer.switchTo(name, built.getValue(name), state, configuration.keepPreviousVersions)
                switched.add(Pair(name, previous))
                changed[name] = model.version.text
            }
            state = finish(state)
            state.save(statePath)
        } catch (error: Throwable) {
            val notUndone = ArrayList<String>()
            for ((name, previous) in switched.reversed()) {
                try {
                    if (previous != null) installer.activate(name, previous) else Files.deleteIfExists(installer.currentLink(name))
                } catch (undo: Exception) {
                    notUndone.add(name)
                }
            }
            try { before.save(statePath) } catch (undo: ClientError) { notUndone.add("state.json") }
            if (notUndone.isNotEmpty()) {
                throw ClientError.Io(statePath.toString(),
                    "${error.message}; putting the models back failed too, so ${notUndone.joinToString(", ")} stayed on the new version")
            }
            throw error
        }
        return Pair(changed, state)
    }

    /**
     * Once the new state is saved: models the manifest no longer names go (by an update, not
     * a request), then older versions of the models the call covered, then the downloads,
     * except those of models left for a later call (to be resumed).
     */
    private fun tidy(release: dev.modelcast.client.format.Release, planned: Planned, scope: UpdateScope, saved: ClientState) {
        var state = saved
        if (scope is UpdateScope.Policy) {
            val named = release.models.map { it.name.text }.toSet() + (release.rollback?.models?.map { it.name.text } ?: emptyList())
            for (installed in installer.installedModels()) {
                if (installed.name in named) continue
                installer.remove(installed.name)
                state = state.copy(installed = state.installed - installed.name, refused = state.refused - installed.name)
            }
        }
        for (name in planned.pruned) installer.pruneTo(name, state)
        if (state != saved) state.save(statePath)
        downloader.removeAll(planned.later)
    }

    /**
     * The state as saved, or, when `state.json` is missing its installs or unreadable,
     * rebuilt from the disk: the `current` links and the records of the versions present (the
     * highest sequence they were installed from is kept, so replays stay refused). Under a
     * key set, a sequence rebuilt from a record is capped by the newest trusted key set's
     * floor for the channel ([rebuiltFloorCap]).
     */
    internal fun loadState(): ClientState {
        val saved = try { ClientState.load(statePath) } catch (unreadable: ClientError.Io) { ClientState() }
        return installer.repair(saved, configuration.manifestUrl, configuration.keepPreviousVersions, rebuiltFloorCap(saved))
    }

    /**
     * The manifest, fetched and proven, when it is new; its sequence must not be below the
     * highest this device accepted from this URL. An update asks for it conditionally
     * (`If-None-Match`) when the last accepted one was applied in full for at least the models
     * this call covers, and is still fresh; a request always fetches it whole. null for a 304
     * to a conditional GET. With [ClientConfiguration.trustedKeySet] the key set chain is
     * walked first ([trustedKeySet]), which may save the state (even for a check).
     */
    private fun acceptedManifest(loaded: ClientState, scope: UpdateScope, cancellation: Cancellation?): CheckedManifest? {
        val url = configuration.manifestUrl
        // With a trusted key set the chain is walked first; it may save a newer key set, a
        // reset sequence floor and no ETags.
        val (keySet, state) = trustedKeySet(loaded, cancellation)
        val fetcher = ManifestFetcher(configuration, http, keySet)
        // The conditional GET is only safe while every model is installed as recorded.
        val complete = state.installed.all { (name, record) -> installer.current(name)?.fileName?.toString() == record.id }
        // A 304 would keep the device on the manifest it trusts: once that one has expired,
        // the manifest is fetched whole and judged as a fresh device judges it.
        val trusted = state.trusted[url]
        val fresh = trusted != null && (trusted.expiresAt?.let { fetcher.isFresh(it) } ?: true)
        val coverage = state.coverage[url]
        val covered = coverage != null && coverage.context == coverageContext &&
            scope is UpdateScope.Policy && DownloadPolicy.values().firstOrNull { it.wireName == coverage.policy }?.let { scope.policy <= it } == true
        val etag = if (complete && fresh && covered) state.etags[url] else null
        val checked = fetcher.fetch(etag, cancellation)
        if (checked == null) {
            // "Not modified" stands for the manifest asked about, and only while it is fresh
            // (the clock is read again: it may have expired during the request).
            trusted?.expiresAt?.let { fetcher.checkFresh(it) }
            if (etag == null) throw ClientError.Http(url, 304)
            return null
        }
        val release = checked.release
        val highest = state.sequences[url]
        if (highest != null && release.sequence < highest) throw ClientError.Replayed(url, release.sequence, highest)
        // Both were parsed already (the manifest by its decoding, the app's by the configuration's validation).
        val minimum = release.minAppVersion
        val app = configuration.appVersion
        if (minimum != null && app != null && dev.modelcast.client.format.AppVersion(app) < minimum) {
            throw ClientError.RequiresNewerApp(minimum.text, app)
        }
        return checked
    }
}
