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
    /// Under a key set, a sequence rebuilt from a record is capped by the newest trusted key
    /// set's floor for the channel (see `rebuiltFloorCap(_:)`).
    func load() -> ClientState {
        // An unreadable state must not stop every update for good: what the disk tells is
        // rebuilt below; what only the file held (refusals, ETags) is lost.
        var state = (try? ClientState.load(path)) ?? ClientState()
        let url = configuration.manifestURL.absoluteString
        let cap = rebuiltFloorCap(state)
        for (name, model) in modelsDirectory.installedVersions() where state.installed[model.name]?.id != model.directory.lastPathComponent {
            let others = modelsDirectory.versions(name).filter { $0 != model.directory.lastPathComponent }
            state.installed[model.name] = ClientState.Installed(version: model.version, id: model.directory.lastPathComponent,
                                                                previous: Array(others.prefix(configuration.keepPreviousVersions)))
            if let record = ModelsDirectory.record(in: model.directory), record.manifestURL == url {
                let sequence = cap.map { min(record.sequence, $0) } ?? record.sequence
                if sequence > state.sequences[url] ?? -1 { state.sequences[url] = sequence }
            }
            state.etags[url] = nil  // the next check fetches the manifest whole
        }
        return state
    }

    /// The highest sequence a version record may bring back, nil for no bound: the floor
    /// for this client's channel in the newest key set this client trusts (the state's, or the app's
    /// when newer or the state is lost). A record may hold a sequence a leaked manifest key
    /// signed (a fast-forward to 2^53); the rotation that revoked the key reset the floor to
    /// that value, and a record must not raise it again after the state is lost, or every
    /// genuine manifest would be refused for good. Not knowing which key signed a record,
    /// every record is capped: after a state loss, a genuine manifest between the floor and
    /// the installed one's sequence is accepted again (signed by current keys and fresh).
    private func rebuiltFloorCap(_ state: ClientState) -> Int64? {
        // try?: a configuration error is reported by the update that follows, not by loading.
        guard let newest = (try? configuration.newestTrustedKeySet(state)) ?? nil else { return nil }
        return newest.sequenceFloors[configuration.channelName]
    }
}
