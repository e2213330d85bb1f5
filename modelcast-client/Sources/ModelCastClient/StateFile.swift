import Foundation
import ModelCastFormat

/// `state.json` in the client's directory (`ClientState`), as a call reads it: the state as
/// saved, completed from the disk where it lacks what is installed. It is written with
/// `ClientState.save(_:)` to `path`, by `VersionSwitch` only.
struct StateFile: Sendable {
    let path: URL
    let modelsDirectory: ModelsDirectory
    let configuration: ClientConfiguration

    /// The state as saved, or, when `state.json` is missing its installs or unreadable,
    /// rebuilt from the disk: the `current` links and the records of the versions present
    /// (the highest sequence they were installed from is kept, so replays stay refused).
    func load() -> ClientState {
        // An unreadable state must not stop every update for good: what the disk tells is
        // rebuilt below; what only the file held (refusals, ETags) is lost.
        var state = (try? ClientState.load(path)) ?? ClientState()
        let url = configuration.manifestURL.absoluteString
        for (name, model) in modelsDirectory.installedVersions() where state.installed[model.name]?.id != model.directory.lastPathComponent {
            let others = modelsDirectory.versions(name).filter { $0 != model.directory.lastPathComponent }
            state.installed[model.name] = ClientState.Installed(version: model.version, id: model.directory.lastPathComponent,
                                                                previous: Array(others.prefix(configuration.keepPreviousVersions)))
            if let record = ModelsDirectory.record(in: model.directory), record.manifestURL == url, record.sequence > state.sequences[url] ?? -1 {
                state.sequences[url] = record.sequence
            }
            state.etags[url] = nil  // the next check fetches the manifest whole
        }
        return state
    }
}
