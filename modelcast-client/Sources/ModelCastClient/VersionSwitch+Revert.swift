import Foundation
import ModelCastFormat

extension VersionSwitch {
    /// `ModelUpdater.reportUnusable`, once the directory's lock is held: switches `model`
    /// back to the newest version kept and refuses the one in use, link and state together
    /// (a switch whose refusal cannot be saved goes back). Returns the version now in use.
    func revert(_ model: String, reason: String) throws -> InstalledModel {
        // A name no model can have is not installed.
        guard let name = try? ModelName(model), let current = modelsDirectory.current(name), let record = ModelsDirectory.record(in: current) else {
            throw ClientError.notInstalled(model: model)
        }
        var state = stateFile.load()
        let id = current.lastPathComponent
        let versions = modelsDirectory.versionsDirectory(name)
        let kept = (state.installed[model]?.previous ?? []).filter { $0 != id && ModelsDirectory.record(in: versions.appendingPathComponent($0)) != nil }
        guard let target = kept.first, let previous = ModelsDirectory.record(in: versions.appendingPathComponent(target)) else {
            throw ClientError.noPreviousVersion(model: model, version: record.version)
        }
        try installer.activate(name, version: versions.appendingPathComponent(target))
        state.installed[model] = ClientState.Installed(version: previous.version, id: target, previous: Array(kept.dropFirst()))
        state.refused[model] = ClientState.Refusal(id: id, version: record.version, variant: record.variant, reason: reason)
        // The next check fetches the manifest whole, so its plan says why the version is not installed again.
        state.etags[configuration.manifestURL.absoluteString] = nil
        do { try state.save(stateFile.path) } catch let saveError {
            // A switch whose refusal is not kept would be undone by the next update: go back.
            do { try installer.activate(name, version: current) } catch {
                throw ClientError.undoFailed(cause: (saveError as? LocalizedError)?.errorDescription ?? String(describing: saveError), models: [model])
            }
            throw saveError
        }
        guard let installed = modelsDirectory.installed(name) else { throw ClientError.notInstalled(model: model) }
        return installed
    }
}
