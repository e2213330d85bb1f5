import Foundation

/// What each release of a channel did, read from the records alone (a record does not
/// say which command wrote it): a staged rollout and its changes, a halt, a completion,
/// a return to an earlier release's files, a promotion of another channel's release, or
/// a plain publish.
struct HistoryActions {
    let history: [Release]
    let otherChannels: [String: [Release]]

    /// Model → the keys of its files (every variant's; the prototypes' under `prototypes`):
    /// what devices download, whatever the sequence.
    private static func content(_ release: Release) -> [String: Set<String>] {
        Dictionary(grouping: release.objects(in: [.release]).filter { $0.kind == .artifact }, by: \.model).mapValues { Set($0.map(\.key)) }
    }

    func describe(_ record: Release) -> (HistoryEntry.Action, String) {
        let previous = record.replaces.flatMap { sequence in history.last { $0.sequence == sequence } }
        let content = Self.content(record)
        let fallback = record.rollback.map { "sequence \($0.sequence)" } ?? "the previous release"
        if let rollout = record.rollout {
            let percent = Rollout.percentText(rollout.basisPoints)
            if rollout.isHalted {
                return (.rolloutHalt, "rollout halted: every device on \(fallback)")
            }
            let schedule = rollout.schedule == nil ? "" : " on a schedule"
            if let previous, previous.rollout != nil, Self.content(previous) == content {
                return (.rollout, "rollout at \(percent)%\(schedule), the others on \(fallback)")
            }
            return (.rollout, "rollout started at \(percent)%\(schedule), the others on \(fallback)")
        }
        if let previous, previous.rollout != nil, Self.content(previous) == content {
            return (.rolloutComplete, "rollout completed: every device on this release")
        }
        let earlier = history.filter { $0.sequence < record.sequence }
        // Another channel's release with these files, published first, that this channel
        // never had: a promotion.
        if !earlier.contains(where: { Self.content($0) == content }) {
            let sources = otherChannels.flatMap { channel, records in
                records.filter { Self.content($0) == content && $0.publishedAt <= record.publishedAt }.map { (channel, $0) }
            }
            if let (channel, source) = sources.max(by: { $0.1.publishedAt < $1.1.publishedAt }) {
                return (.promote, "promoted from channel \(channel) (sequence \(source.sequence))")
            }
            return (.publish, "published")
        }
        if let previous, Self.content(previous) == content {
            return (.republish, "the same files as sequence \(previous.sequence) (re-signed or published again)")
        }
        let returnedTo = earlier.last { Self.content($0) == content }!
        let versions = returnedTo.models.keys.sorted().map { "\($0) \(returnedTo.models[$0]!.version)" }.joined(separator: ", ")
        return (.rollback, "rolled back to sequence \(returnedTo.sequence) (\(versions))")
    }
}
