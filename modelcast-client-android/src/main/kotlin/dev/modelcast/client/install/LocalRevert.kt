package dev.modelcast.client.install

import dev.modelcast.client.ClientError
import dev.modelcast.client.net.Cancellation
import java.nio.file.Path

/**
 * Reports that the version of `model` in use does not work on this device: switches the
 * model back to the previous version kept (`ClientState.installed[model].previous`) at once,
 * without the network, and refuses the reported version until a manifest names another
 * one (kept in `state.json`, with the manifest's ETag dropped so the next check fetches it
 * whole and says why). The Swift client's `reportUnusable`, for a caller that has the state's
 * path: it takes the directory's lock unless a call of this process holds it (an update
 * under way here keeps the switch), waiting at most `lockTimeoutSeconds`.
 *
 * @return the version now in use.
 * @throws ClientError [ClientError.NotInstalled] when no version of `model` is installed,
 *   [ClientError.NoPreviousVersion] when none is kept to go back to (nothing changes then),
 *   [ClientError.Io] when the link or the state cannot be written (the model is then left as
 *   it was), [ClientError.DirectoryBusy] when another process kept the directory past the timeout.
 */
fun Installer.reportUnusable(model: String, reason: String, manifestURL: String, statePath: Path,
                             lockTimeoutSeconds: Double = 30.0, cancellation: Cancellation? = null): InstalledModel {
    val lock = if (DirectoryLock.isHeldInThisProcess(directory)) null else DirectoryLock.acquire(directory, lockTimeoutSeconds, cancellation)
    try {
        if (Names.modelNameProblem(model) != null) throw ClientError.NotInstalled(model)
        val current = current(model) ?: throw ClientError.NotInstalled(model)
        val record = Installer.record(current) ?: throw ClientError.NotInstalled(model)
        val state = try { ClientState.load(statePath) } catch (unreadable: ClientError.Io) { ClientState() }
        val id = current.fileName.toString()
        val versions = versionsDirectory(model)
        val kept = (state.installed[model]?.previous ?: emptyList())
            .filter { it != id && Names.segmentProblem(it) == null && Installer.record(versions.resolve(it)) != null }
        val target = kept.firstOrNull() ?: throw ClientError.NoPreviousVersion(model)
        val previous = Installer.record(versions.resolve(target)) ?: throw ClientError.NoPreviousVersion(model)
        activate(model, versions.resolve(target))
        val updated = state.copy(
            installed = state.installed + (model to ClientState.Installed(previous.version, target, kept.drop(1))),
            refused = state.refused + (model to ClientState.Refusal(id, record.version, record.variant, reason)),
            etags = state.etags - manifestURL
        )
        try {
            updated.save(statePath)
        } catch (saveError: ClientError) {
            // A switch whose refusal is not kept would be undone by the next update: go back.
            try {
                activate(model, current)
            } catch (undoError: ClientError) {
                throw ClientError.Io(statePath.toString(), "${saveError.message}; switching ${dev.modelcast.client.quoted(model)} back failed too (${undoError.message}): it is left on ${previous.version}")
            }
            throw saveError
        }
        return installed(model) ?: throw ClientError.NotInstalled(model)
    } finally {
        lock?.release()
    }
}
