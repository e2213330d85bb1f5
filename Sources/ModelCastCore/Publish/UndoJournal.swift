import Foundation

/// Best-effort undo steps recorded while a plan is applied, run newest first. A step
/// that fails is reported (returned), never silently swallowed.
final class UndoJournal {
    /// What an undo step puts right, which decides when it runs.
    enum Kind: Sendable {
        /// Removes what this run stored (objects, its history record, its release's kept
        /// signature). After a manifest write that did not happen these stay, for the
        /// next attempt.
        case removeStored
        /// Puts back what readers of the target saw before (the index, the hosting files,
        /// the live signature): after a manifest write that did not happen, only these run.
        case restorePrevious
    }

    private var steps: [(kind: Kind, label: String, run: () async throws -> Void)] = []

    /// Records a step; `label` says what it does (`restore manifest.json.minisig`), for
    /// the line a failure of it reports.
    func record(_ kind: Kind, _ label: String, _ run: @escaping () async throws -> Void) {
        steps.append((kind, label, run))
    }

    /// Runs only the steps of `kind` (newest first), dropping the rest: after a manifest
    /// write that did not happen, the signature and hosting files go back, while the
    /// stored objects stay for the next attempt.
    func undoOnly(_ kind: Kind) async -> [String] {
        steps.removeAll { $0.kind != kind }
        return await undo()
    }

    /// Runs every step, newest first; returns one line per step that failed.
    func undo() async -> [String] {
        var failures: [String] = []
        for step in steps.reversed() {
            do { try await step.run() } catch { failures.append("could not \(step.label): \(error)") }
        }
        steps.removeAll()
        return failures
    }
}
