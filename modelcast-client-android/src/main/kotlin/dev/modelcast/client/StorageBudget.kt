package dev.modelcast.client

import dev.modelcast.client.format.DownloadPolicy
import dev.modelcast.client.format.ModelStorage
import dev.modelcast.client.format.ReleaseModel
import dev.modelcast.client.install.ClientState
import dev.modelcast.client.install.InstallSpace
import dev.modelcast.client.install.Installer
import java.io.IOException
import java.nio.file.Files
import java.nio.file.LinkOption
import java.nio.file.Path
import java.nio.file.attribute.BasicFileAttributes

// The storage budget (ClientConfiguration.storageBudget): what the installed models take
// once an update's installs are in, and the on-demand models it evicts to stay within it.

/** What the budget asks of an update: the models to evict first, or the refusal when evicting cannot make room. */
internal class StorageDecision(val evictions: List<String>, val problem: ClientError.OverStorageBudget?)

/** Bytes a model version takes installed: the manifest's install size, else its files' sizes. */
internal fun ReleaseModel.installBytes(): Long =
    storage?.installSize ?: files.fold(0L) { total, file -> InstallSpace.add(total, file.size) }

/**
 * The evictions [installs] need to keep every installed version within [budget], judged on
 * the disk: each installed model at the bytes of its version directories; each model of
 * [installs] at its new version ([ReleaseModel.installBytes], or the kept directory's bytes)
 * plus the versions the switch keeps beside it. Evictable: installed models whose policy
 * ([policies]) is on-demand, not in [inUse] and not installed now; lowest storage priority
 * ([storage]) first, then least recently used ([lastUses], else the time their version was
 * installed). Models [leaving] (no longer in the manifest) are not counted: the update removes them.
 */
internal fun ModelUpdater.storageDecision(budget: Long, installs: List<ReleaseModel>, state: ClientState, policies: Map<String, DownloadPolicy>,
                                          storage: Map<String, ModelStorage?>, inUse: Set<String>, lastUses: Map<String, Long>,
                                          leaving: Set<String>): StorageDecision {
    val installing = installs.map { it.name.text }.toSet()
    val sizes = LinkedHashMap<String, Long>()
    for (model in installer.installedModels()) {
        if (model.name in installing || model.name in leaving) continue
        sizes[model.name] = versionsBytes(installer.versionsDirectory(model.name))
    }
    var total = sizes.values.fold(0L, InstallSpace::add)
    var largest: Pair<String, Long>? = null
    for (model in installs) {
        val name = model.name.text
        val kept = installer.kept(model.installVersion())
        val id = model.versionId
        val current = installer.current(name)?.fileName?.toString()
        val previous = (listOfNotNull(current) + (state.installed[name]?.previous ?: emptyList())).filter { it != id }.distinct()
            .take(Math.max(0, configuration.keepPreviousVersions))
        val versions = installer.versionsDirectory(name)
        val own = kept?.let { directoryBytes(it) } ?: model.installBytes()
        val after = previous.fold(own) { sum, directory -> InstallSpace.add(sum, directoryBytes(versions.resolve(directory))) }
        total = InstallSpace.add(total, after)
        if (largest == null || own > largest.second) largest = Pair(name, own)
    }
    if (total <= budget || largest == null) return StorageDecision(emptyList(), null)
    val installedAt = { name: String -> installer.current(name)?.let { modified(it) } ?: 0L }
    val candidates = sizes.keys.filter { policies[it] == DownloadPolicy.ON_DEMAND && it !in inUse }
        .sortedWith(compareBy<String>({ storage[it]?.priority ?: ModelStorage.DEFAULT_PRIORITY }, { lastUses[it] ?: installedAt(it) }, { it }))
    val evictions = ArrayList<String>()
    var left = total
    for (name in candidates) {
        if (left <= budget) break
        evictions.add(name)
        left -= sizes.getValue(name)
    }
    if (left <= budget) return StorageDecision(evictions, null)
    // Still over: name what would have to go besides, the models the client may not evict.
    val wouldGo = ArrayList(evictions)
    for (name in sizes.keys.filter { it !in candidates }.sorted()) {
        if (left <= budget) break
        wouldGo.add(name)
        left -= sizes.getValue(name)
    }
    return StorageDecision(emptyList(), ClientError.OverStorageBudget(largest.first, total, budget, wouldGo))
}

/** Bytes of the regular files of every version directory under [versions] (links are not followed; staging leftovers are left out). */
private fun versionsBytes(versions: Path): Long =
    Installer.listNames(versions).filter { !it.startsWith(".") }.fold(0L) { sum, name -> InstallSpace.add(sum, directoryBytes(versions.resolve(name))) }

/** Bytes of the regular files under [directory], links not followed. */
private fun directoryBytes(directory: Path): Long {
    var total = 0L
    val attributes = try { Files.readAttributes(directory, BasicFileAttributes::class.java, LinkOption.NOFOLLOW_LINKS) } catch (error: IOException) { return 0 }
    if (attributes.isRegularFile) return attributes.size()
    if (!attributes.isDirectory) return 0
    for (name in Installer.listNames(directory)) total = InstallSpace.add(total, directoryBytes(directory.resolve(name)))
    return total
}

/** When [path] last changed, ms since the epoch (0 when unknown). */
private fun modified(path: Path): Long = try { Files.getLastModifiedTime(path, LinkOption.NOFOLLOW_LINKS).toMillis() } catch (error: IOException) { 0L }

/**
 * Evicts [models]: each one's version directories (current and kept) and its state entry,
 * the state saved before the next step (a crash after it leaves a model fully gone, which
 * the next update may install again).
 */
internal fun ModelUpdater.evict(models: List<String>) {
    if (models.isEmpty()) return
    var state = loadState()
    for (name in models) {
        installer.remove(name)
        state = state.copy(installed = state.installed - name, refused = state.refused - name)
    }
    state.save(statePath)
}
