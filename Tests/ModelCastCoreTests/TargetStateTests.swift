import Foundation
import XCTest
@testable import ModelCastCore

/// Which records went live, from the records alone (some of them pruned).
final class TargetStateTests: XCTestCase {
    func record(_ sequence: Int64, replaces: Int64?, rollback: Int64? = nil) -> Release {
        Release(
            sequence: sequence, publishedAt: "2026-11-22T00:00:00Z", channel: "stable", profile: "modelcast",
            models: ["m": ReleaseModel(version: "1.\(sequence).0", files: [])],
            rollback: rollback.map { ReleaseRollback(sequence: $0, models: [:]) }, replaces: replaces)
    }

    func state(_ history: [Release], live: Int64?) -> TargetState {
        TargetState(
            history: history, manifestInfo: nil, manifestData: live.map { _ in Data("{}".utf8) }, signatureData: nil,
            liveRecord: live.flatMap { sequence in history.first { $0.sequence == sequence } })
    }

    func testRecordsSkippedByALaterPublishNeverWentLive() {
        // 3's publish died before its manifest write: 4 replaced 2. 5 was pruned; 7 is under way.
        let history = [
            record(1, replaces: nil), record(2, replaces: 1), record(3, replaces: 2), record(4, replaces: 2),
            record(6, replaces: 5, rollback: 1), record(7, replaces: 6),
        ]
        XCTAssertEqual(state(history, live: 6).wentLive.map(\.sequence), [1, 2, 4, 6])
        // After a prune, the records left are judged by the records left (prune deletes a
        // skipped record no later than the record that skipped it).
        XCTAssertEqual(state([record(6, replaces: 5), record(7, replaces: 6)], live: 6).wentLive.map(\.sequence), [6])
        // Nothing live: nothing went live.
        XCTAssertEqual(state(history, live: nil).wentLive.map(\.sequence), [])
    }

    func testAFailedFirstPublishNeverWentLive() {
        // 1 failed with nothing live; 2 was published when nothing was live either.
        XCTAssertEqual(state([record(1, replaces: nil), record(2, replaces: nil)], live: 2).wentLive.map(\.sequence), [2])
    }

    func testRecordsFromBeforeReplacesUseTheRollbackField() {
        // Session-1 records: no `replaces`, the rollback field names the previous live release.
        let history = [record(1, replaces: nil), record(2, replaces: nil, rollback: 1), record(3, replaces: nil, rollback: 2), record(4, replaces: nil, rollback: 2)]
        XCTAssertEqual(state(history, live: 4).wentLive.map(\.sequence), [1, 2, 4])
    }
}
