import Foundation

/// What a target's history says of its live manifest (`verify DIR`, `verify s3://`): which
/// release it renders, that it is not older than one that went live, and which objects a
/// rollback would restore (they must still be there).
struct TargetHistoryCheck {
    let state: TargetState
    let manifestKey: String

    /// Logs `manifest.history` and `manifest.freshness`; returns the objects of the release
    /// a rollback would restore, labelled `rollback NAME VERSION/FILE`.
    func check(source: String, log: CheckLog) -> [ExpectedObject] {
        guard let latest = state.history.last else {
            log.add(.warn, .manifestHistory, source, "no history record under \(TargetLayout.historyPrefix(manifestKey: manifestKey)): which release the manifest is cannot be told")
            return []
        }
        let freshness = LiveFreshness(state)
        if let live = state.liveRecord {
            // A newer record may be a publish that died before its manifest write, or one
            // that went live and was then replaced by this older manifest (checked below).
            let newer = latest.sequence == live.sequence ? "" : freshness.isStale ? " (newer records exist)" : " (record \(latest.sequence) never went live)"
            log.add(.pass, .manifestHistory, source, "the live manifest is history record \(live.sequence)\(newer)")
        } else {
            log.add(.warn, .manifestHistory, source, "the live manifest is not the rendering of any history record (edited by hand?)")
        }
        freshness.check(source: source, log: log)
        let record = state.liveRecord ?? latest
        var objects: [ExpectedObject] = []
        for (name, model) in (record.rollback?.models ?? [:]).sorted(by: { $0.key < $1.key }) {
            for file in model.allFiles {
                let place = "\(model.tree.map { $0 + "/" } ?? "")\(file.placement)"
                objects.append(ExpectedObject(label: "rollback \(name) \(model.version)/\(place)", url: file.url, sha256: file.sha256, size: file.size,
                                              approximateSize: nil, contentType: file.contentType))
            }
        }
        return objects
    }
}
