import Foundation

/// The staged rollout a channel's live release is in (or just ended), read from the
/// records that went live: each record of the rollout (one salt) set the candidate's share
/// from its publish time on — a fixed share, or a schedule's steps — until the next one.
enum RolloutCurve {
    /// `live` is the release devices get; `liveAction` what its record did (`HistoryActions`).
    static func report(_ state: TargetState, live: Release, liveAction: HistoryEntry.Action?, now: Date) -> RolloutReport? {
        let earlier = state.wentLive.filter { $0.sequence < live.sequence }
        var chain: [Release]
        var completion: Release?
        if let rollout = live.rollout {
            chain = run(of: rollout.salt, endingIn: earlier) + [live]
        } else if liveAction == .rolloutComplete, let rollout = earlier.last?.rollout {
            chain = run(of: rollout.salt, endingIn: earlier)
            completion = live
        } else {
            return nil
        }
        guard let first = chain.first?.rollout, let last = chain.last else { return nil }
        let percentNow: Int
        let outcome: RolloutReport.State
        if completion != nil {
            (percentNow, outcome) = (10_000, .complete)
        } else {
            let rollout = last.rollout!
            percentNow = rollout.basisPoints(at: now)
            outcome = rollout.isHalted ? .halted : rollout.isInProgress(at: now) ? .inProgress : .complete
        }
        let schedule = chain.last { $0.rollout?.schedule != nil }?.rollout?.schedule
        return RolloutReport(
            state: outcome, percentNow: percent(percentNow), candidateSequence: (completion ?? last).sequence, fallbackSequence: last.rollback?.sequence,
            candidateVersions: (completion ?? last).unitsByLabel.mapValues(\.version),
            fallbackVersions: last.rollback.map { Release.units(of: $0.models).mapValues(\.version) } ?? [:],
            startedAt: first.startedAt, curve: curve(chain + [completion].compactMap { $0 }),
            schedule: schedule.map { $0.map { RolloutReport.Point(at: $0.at, percent: percent($0.basisPoints)) } })
    }

    /// The records just before `records`' end that carry the rollout with `salt`, oldest first.
    private static func run(of salt: String, endingIn records: [Release]) -> [Release] {
        Array(records.reversed().prefix { $0.rollout?.salt == salt }.reversed())
    }

    /// The share each record set from its publish time until the next record's, as steps.
    /// Records published within the same second are each a step (a script may set 10 %,
    /// then 50 %, then 40 %): history lists them all, and so does the page.
    private static func curve(_ records: [Release]) -> [RolloutReport.Point] {
        var points: [RolloutReport.Point] = []
        func add(_ at: String, _ basisPoints: Int) {
            if points.last?.percent == percent(basisPoints) { return }
            points.append(.init(at: at, percent: percent(basisPoints)))
        }
        for (index, record) in records.enumerated() {
            guard let start = parseTimestamp(record.publishedAt) else { continue }
            let end = index + 1 < records.count ? parseTimestamp(records[index + 1].publishedAt) : nil
            guard let rollout = record.rollout else {
                add(record.publishedAt, 10_000)
                continue
            }
            add(record.publishedAt, rollout.basisPoints(at: start))
            for step in rollout.schedule ?? [] {
                guard let at = parseTimestamp(step.at), at > start, end.map({ at < $0 }) ?? true else { continue }
                add(step.at, step.basisPoints)
            }
        }
        return points
    }

    static func percent(_ basisPoints: Int) -> Double { Double(basisPoints) / 100 }
}
