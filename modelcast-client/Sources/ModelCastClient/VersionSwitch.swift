import Foundation
import ModelCastFormat

/// Moves the models from the versions in use to others, with `state.json`: the `current`
/// links and the state change as one step (`switchModels`; a local revert,
/// `VersionSwitch+Revert.swift`), and once the new state holds, what it no longer needs
/// goes (`tidy`). Nothing here awaits: a cancellation cannot land half-way.
struct VersionSwitch: Sendable {
    let configuration: ClientConfiguration
    let installer: Installer
    let downloader: Downloader
    let stateFile: StateFile

    var modelsDirectory: ModelsDirectory { installer.modelsDirectory }

    /// The switch: every model's link, then the state (completed by `finish`). If any step
    /// fails, the links already switched go back, so a failed update leaves every model as
    /// it was. Returns the models switched, name → version.
    func switchModels(_ models: [CheckedModel], built: [ModelName: URL], state: inout ClientState,
                      finish: (inout ClientState) -> Void) throws -> [String: String] {
        var changed: [String: String] = [:]
        var switched: [(name: ModelName, previous: URL?)] = []
        let before = state
        do {
            for model in models {
                let previous = modelsDirectory.current(model.name)
                try installer.activate(model.name, version: built[model.name]!)
                switched.append((model.name, previous))
                let id = ModelsDirectory.versionID(model)
                var history = previous.map { [$0.lastPathComponent] } ?? []
                history += state.installed[model.name.rawValue]?.previous ?? []
                history.removeAll { $0 == id }
                state.installed[model.name.rawValue] = ClientState.Installed(
                    version: model.version.rawValue, id: id, previous: Array(Self.unique(history).prefix(configuration.keepPreviousVersions)))
                changed[model.name.rawValue] = model.version.rawValue
            }
            finish(&state)
            try state.save(stateFile.path)
        } catch {
            var notUndone: [String] = []
            for (name, previous) in switched.reversed() {
                do {
                    if let previous { try installer.activate(name, version: previous) } else { try FileManager.default.removeItem(at: modelsDirectory.currentLink(name)) }
                } catch {
                    notUndone.append(name.rawValue)
                }
            }
            do { try before.save(stateFile.path) } catch { notUndone.append("state.json") }
            if !notUndone.isEmpty { throw ClientError.undoFailed(cause: (error as? LocalizedError)?.errorDescription ?? String(describing: error), models: notUndone) }
            throw error
        }
        return changed
    }

    /// Once the new state is saved: models the manifest no longer names go (by an update,
    /// not a request), then older versions of the models the call covered, then the
    /// downloads, except those of models left for a later call (to be resumed).
    func tidy(_ release: Release, planned: Planned, scope: UpdateScope, state: inout ClientState) throws {
        if case .policy = scope {
            let named = Set(release.models.keys).union(release.rollback?.models.keys.map { $0 } ?? [])
            for (name, installed) in modelsDirectory.installedVersions() where !named.contains(installed.name) {
                installer.remove(name)
                state.installed[installed.name] = nil
                state.refused[installed.name] = nil
            }
        }
        // Within the storage budget: the on-demand models the plan chose go whole.
        for name in planned.evictions {
            installer.remove(name)
            state.installed[name.rawValue] = nil
            state.refused[name.rawValue] = nil
        }
        for name in planned.pruned {
            guard let record = state.installed[name.rawValue] else { continue }
            installer.prune(name, keep: Set([record.id] + record.previous))
        }
        try state.save(stateFile.path)
        downloader.removeAll(keeping: planned.later)
    }

    private static func unique(_ ids: [String]) -> [String] {
        var seen = Set<String>()
        return ids.filter { seen.insert($0).inserted }
    }
}
