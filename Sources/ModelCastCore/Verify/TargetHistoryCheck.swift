import Foundation

/// What a target's history says of its live manifest (`verify DIR`, `verify s3://`): which
/// release it renders, that it is not older than one that went live, and which objects a
/// rollback would restore (they must still be there).
struct TargetHistoryCheck {
    let state: TargetState
    let manifestKey: String

    /// Logs `manifest.history` and `manifest.freshness`; returns the objects of the release
    /// a rollback would restore (its rollback section's `Release.objects`: artifacts,
    /// segment indexes, model signatures), labelled `rollback UNIT VERSION/FILE`.
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
        return record.objects(in: [.fallback]).map(ExpectedObject.init)
    }
}
