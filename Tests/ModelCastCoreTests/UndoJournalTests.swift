import Foundation
import XCTest
@testable import ModelCastCore

/// The undo journal picks steps by their kind (issue 48, item 10), not by how their
/// label reads: after a manifest write that did not happen only what readers saw before
/// is put back, newest first, and a step that fails is reported by its label.
final class UndoJournalTests: XCTestCase {
    /// The steps that ran, in order.
    private final class Ran {
        var steps: [String] = []
    }

    /// A journal of `steps` (kind, label, the name a run records; nil: the step fails).
    private func journal(_ steps: [(UndoJournal.Kind, String, String?)], ran: Ran) -> UndoJournal {
        let journal = UndoJournal()
        for (kind, label, name) in steps {
            journal.record(kind, label) {
                guard let name else { throw CocoaError(.fileWriteNoPermission) }
                ran.steps.append(name)
            }
        }
        return journal
    }

    func testOnlyTheRestoreStepsRunAfterAManifestWriteThatDidNotHappen() async {
        let ran = Ran()
        let journal = journal([
            (.removeStored, "restore-looking removal of models/m/1.0.0/m.bin", "remove object"),
            (.restorePrevious, "put the index back", "index"),
            (.removeStored, "remove manifests/2.json", "remove record"),
            (.restorePrevious, "rewrite the hosting files", "hosting files"),
            (.restorePrevious, "restore manifest.json.minisig", nil),
        ], ran: ran)
        let failures = await journal.undoOnly(.restorePrevious)
        XCTAssertEqual(ran.steps, ["hosting files", "index"], "newest first, removals left for the next attempt")
        XCTAssertEqual(failures.count, 1)
        XCTAssertTrue(failures[0].hasPrefix("could not restore manifest.json.minisig: "), failures[0])
        // The steps that ran (and those dropped) are gone.
        let again = await journal.undo()
        XCTAssertEqual(again, [])
        XCTAssertEqual(ran.steps, ["hosting files", "index"])
    }

    func testAFailedCommitUndoesEveryStepNewestFirst() async {
        let ran = Ran()
        let journal = journal([
            (.removeStored, "remove the objects this run stored", "objects"), (.restorePrevious, "restore the index", "index"),
            (.removeStored, "remove manifests/2.json", "record"),
        ], ran: ran)
        let failures = await journal.undo()
        XCTAssertEqual(failures, [])
        XCTAssertEqual(ran.steps, ["record", "index", "objects"])
    }
}
