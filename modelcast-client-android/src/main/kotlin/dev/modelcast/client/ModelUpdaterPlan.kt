package dev.modelcast.client

import dev.modelcast.client.format.DownloadPolicy
import dev.modelcast.client.format.Release
import dev.modelcast.client.format.ReleaseFile
import dev.modelcast.client.format.ReleaseModel
import dev.modelcast.client.format.VariantChoice
import dev.modelcast.client.format.choice
import dev.modelcast.client.install.ClientState
import java.security.MessageDigest

/** Which models a call covers. */
internal sealed class UpdateScope {
    /** An update: the models whose policy is up to this one (for prefetch, the on-demand models installed too). */
    class Policy(val policy: DownloadPolicy) : UpdateScope()

    /** A request: this model alone. */
    class Model(val name: String) : UpdateScope()
}

/**
 * A call's plan and what it acts on.
 *
 * @property installs the models to switch to, each as the variant this device takes
 *   (downloaded first unless a version with its files is kept).
 * @property covered every covered model this device takes a version of (`installs` included).
 * @property pruned the models whose older versions the tidy-up prunes: the covered and the refused ones.
 * @property later the files (SHA-256) of models the call leaves for later (a waiting one too): their partial downloads are kept.
 */
internal class Planned(
    val plan: UpdatePlan,
    val installs: List<ReleaseModel>,
    val covered: List<ReleaseModel>,
    val pruned: List<String>,
    val later: Set<String>,
    /** Why the installs cannot stay within the storage budget; thrown before anything is evicted or downloaded. */
    val overBudget: ClientError.OverStorageBudget? = null
)

/**
 * What a call of [scope] does with [release] on this device; reads the disk, changes
 * nothing. Per model the rollout's choice names: its policy; whether the call covers it; the
 * variant the device takes (none: the model is left as it is); a refused version (left as it
 * is); whether the version in use already is that one; whether it waits (a licence, a
 * download condition); and what the storage budget evicts for the installs.
 */
internal fun ModelUpdater.plan(release: Release, state: ClientState, scope: UpdateScope): Planned {
    val (takesCandidate, models) = chosenModels(release)
    val policies = LinkedHashMap<String, DownloadPolicy>()
    val variants = LinkedHashMap<String, VariantChoice>()
    val versions = LinkedHashMap<String, String>()
    val refused = LinkedHashMap<String, RefusedVersion>()
    val installs = ArrayList<ReleaseModel>()
    val covered = ArrayList<ReleaseModel>()
    val pruned = ArrayList<String>()
    val later = HashSet<String>()
    val waiting = LinkedHashMap<String, WaitReason>()
    val accepted = licences.accepted()
    val now = conditions
    for (model in models) {
        val name = model.name.text
        val policy = configuration.downloadPolicies[name] ?: model.download ?: DownloadPolicy.PREFETCH
        policies[name] = policy
        val choice = model.choice(configuration.device)
        if (!covers(scope, name, policy)) {
            choice.chosen?.files?.forEach { later.add(it.sha256.text) }
            continue
        }
        if (model.variants.isNotEmpty()) variants[name] = choice
        val chosen = choice.chosen ?: continue
        val id = chosen.versionId
        pruned.add(name)
        val refusal = state.refused[name]
        if (refusal != null && refusal.id == id) {
            refused[name] = RefusedVersion(name, refusal.version, refusal.variant, refusal.id, refusal.reason)
            continue
        }
        val changes = installer.current(name)?.fileName?.toString() != id
        if (changes) {
            val reason = waitReason(chosen, modelBytesToDownload(chosen), accepted, now)
            if (reason != null) {
                waiting[name] = reason
                chosen.files.forEach { later.add(it.sha256.text) }
                continue
            }
        }
        versions[name] = chosen.version.text
        covered.add(chosen)
        if (changes) installs.add(chosen)
    }
    val budget = configuration.storageBudget
    val storage = if (budget == null || installs.isEmpty()) StorageDecision(emptyList(), null) else {
        val named = release.models.map { it.name.text }.toSet() + (release.rollback?.models?.map { it.name.text } ?: emptyList())
        val leaving = if (scope is UpdateScope.Policy) installer.installedModels().map { it.name }.filter { it !in named }.toSet() else emptySet()
        storageDecision(budget, installs, state, policies, models.associate { it.name.text to it.storage }, use.inUse(), use.lastUses(), leaving)
    }
    val plan = UpdatePlan(
        sequence = release.sequence, takesCandidate = takesCandidate, versions = versions, bytesToDownload = bytesToDownload(installs),
        installs = installs.associate { it.name.text to it.version.text }, variants = variants, policies = policies, refused = refused,
        waiting = waiting, evictions = storage.evictions)
    return Planned(plan, installs, covered, pruned, later, storage.problem)
}

/** Bytes still to download for [model] alone: 0 when a version with its files is kept, else its files less what is on the disk. */
internal fun ModelUpdater.modelBytesToDownload(model: ReleaseModel): Long {
    if (installer.kept(model.installVersion()) != null) return 0
    return model.files.fold(0L) { total, file -> addSizes(total, file.size - downloader.bytesOnDisk(file.remote(model))) }
}

/**
 * The rollout's choice for this device: the candidate (the release's models) or the
 * fallback (its rollback section), by the cohort rule; filtered by [ClientConfiguration.models].
 */
private fun ModelUpdater.chosenModels(release: Release): Pair<Boolean, List<ReleaseModel>> {
    val candidate = release.rollout?.selects(configuration.deviceId, configuration.clock()) ?: true
    val rollback = release.rollback
    var models = if (candidate || rollback == null) release.models else rollback.models
    configuration.models?.let { wanted -> models = models.filter { it.name.text in wanted } }
    return Pair(candidate, models)
}

/** Whether a call of [scope] covers the model [name], whose policy is [policy]. */
private fun ModelUpdater.covers(scope: UpdateScope, name: String, policy: DownloadPolicy): Boolean = when (scope) {
    is UpdateScope.Model -> scope.name == name
    // An on-demand model, once requested, is kept up to date like a prefetch one.
    is UpdateScope.Policy -> policy <= scope.policy ||
        (policy == DownloadPolicy.ON_DEMAND && scope.policy == DownloadPolicy.PREFETCH && installer.current(name) != null)
}

/** Bytes still to download for [models] (each file once; kept versions and what is on the disk already excluded). */
private fun ModelUpdater.bytesToDownload(models: List<ReleaseModel>): Long {
    var bytes = 0L
    for ((file, model) in filesToFetch(models)) bytes = addSizes(bytes, file.size - downloader.bytesOnDisk(file.remote(model)))
    return bytes
}

/** The models of [models] whose version is not kept already (those an update downloads and builds). */
internal fun ModelUpdater.notKept(models: List<ReleaseModel>): List<ReleaseModel> =
    models.filter { installer.kept(it.installVersion()) == null }

/** The files [notKept] models need, each once (by SHA-256), with the model naming it. */
internal fun ModelUpdater.filesToFetch(models: List<ReleaseModel>): Collection<Pair<ReleaseFile, ReleaseModel>> {
    val files = LinkedHashMap<String, Pair<ReleaseFile, ReleaseModel>>()
    for (model in notKept(models)) for (file in model.files) files[file.sha256.text] = Pair(file, model)
    return files.values
}

/** `a + b`, refusing a total past what 64 bits hold (thousands of sizes of up to 2^53 could add up past it). */
internal fun ModelUpdater.addSizes(a: Long, b: Long): Long {
    val sum = a + b
    if (((a xor sum) and (b xor sum)) < 0) {
        throw ClientError.InvalidManifest(configuration.manifestUrl, "files", null, "have sizes that add up to more than 2^63 bytes")
    }
    return sum
}

/**
 * A digest of what, besides the manifest, decides the models and variants a call takes:
 * the device profile, the app's policies, models and device id. A 304 stands for "nothing
 * to do" only while it is the same.
 */
internal val ModelUpdater.coverageContext: String
    get() {
        val device = configuration.device
        val policies = configuration.downloadPolicies
        val parts = listOf(
            device.physicalMemory?.toString() ?: "-",
            device.platform?.wireName ?: "-",
            device.osVersion ?: "-",
            device.architecture ?: "-",
            device.accelerators.map { it.wireName }.sorted().joinToString(","),
            device.capabilities.sorted().joinToString(","),
            policies.keys.sorted().joinToString(",") { "$it=${policies.getValue(it).wireName}" },
            configuration.models?.sorted()?.joinToString(",") ?: "*",
            configuration.deviceId)
        val digest = MessageDigest.getInstance("SHA-256").digest(parts.joinToString("\n").toByteArray(Charsets.UTF_8))
        return digest.joinToString("") { String.format("%02x", it.toInt() and 0xff) }
    }
