import Foundation
import ModelCastFormat

/// What every command that writes a target needs (publish, rollback, promote, resign,
/// rollout changes, prune, the index rebuild): the store and the log, the target's lock,
/// its state read for writing (`loadForWriting`), the history index and the hosting files
/// (`TargetWriter+HostingFiles.swift`). Each command is one small type built on it
/// (`TargetWriting`); a release goes live through `Committer`.
package struct TargetWriter: Sendable {
    package let storage: any Storage
    /// Receives warnings and progress lines (the CLI prints them to standard error).
    package let log: @Sendable (String) -> Void
    /// Runs after every artifact is stored and checked, before the history record
    /// and the manifest are written; throwing stops the command with nothing live changed.
    package let beforeManifest: (@Sendable (Data) async throws -> Void)?

    package init(storage: any Storage, log: @escaping @Sendable (String) -> Void = { _ in }, beforeManifest: (@Sendable (Data) async throws -> Void)? = nil) {
        self.storage = storage
        self.log = log
        self.beforeManifest = beforeManifest
    }

    /// Proves stored objects against what a release names.
    var proofs: ObjectProofs { ObjectProofs(writer: self) }
    /// Removes objects no history record names, safely where other runs write too.
    var remover: ObjectRemover { ObjectRemover(writer: self) }
    /// Makes a release live: plan, then apply (or report a dry run).
    var committer: Committer { Committer(writer: self) }

    /// Takes the target's lock, where it has one (publishes, rollbacks and prunes run one
    /// at a time). Only a publish creates a missing target; the commands that work on what
    /// is already published leave a missing one missing (and find nothing there).
    func lockTarget(dryRun: Bool, create: Bool = false) throws -> (any StorageLock)? {
        dryRun ? nil : try storage.capabilities.lock?.acquire(create)
    }

    /// Replaces the history index with `entries` (oldest first) if it is still as read
    /// (`ifMatch`: its etag, "" for none; nil replaces whatever is there).
    func writeIndex(_ entries: [HistoryIndex.Entry], manifestKey: String, ifMatch: String?) async throws {
        let data = HistoryIndex(entries: entries).encoded(manifestKey: manifestKey)
        try await storage.replace(HistoryIndex.key(manifestKey: manifestKey), data: data, metadata: try HistoryIndex.metadata(of: data), ifMatch: ifMatch)
    }

    /// The live manifest's Cache-Control: what the store reports, or for a directory the
    /// value its hosting files declare.
    func liveManifestCacheControl(state: TargetState, manifestKey: String) -> String {
        if let value = state.manifestInfo?.cacheControl { return value }
        // A directory has no object metadata but what its hosting files declare.
        if let root = storage.capabilities.hostingRoot,
           // try?: hosting files that cannot be read, or a value that is no manifest policy, give the default (as none declared).
           let value = (try? HostedObjectsFile(root: root))??.declared[manifestKey]?.cacheControl,
           (try? CachePolicy.validateManifest(value)) != nil {
            return value
        }
        return CachePolicy.manifestDefault
    }
}

/// A type built on what every write needs: each command that writes a target (`Publisher`,
/// `RollbackPublisher`, `Promoter`, `Resigner`, `RolloutChanger`, `Pruner`,
/// `IndexRebuilder`), and the shared steps (`Committer`, `CommitApplier`, `ObjectProofs`,
/// `ObjectRemover`).
package protocol TargetWriting: Sendable {
    var writer: TargetWriter { get }
    init(writer: TargetWriter)
}

extension TargetWriting {
    /// The command on a writer of its own for `storage`.
    package init(storage: any Storage, log: @escaping @Sendable (String) -> Void = { _ in }, beforeManifest: (@Sendable (Data) async throws -> Void)? = nil) {
        self.init(writer: TargetWriter(storage: storage, log: log, beforeManifest: beforeManifest))
    }

    var storage: any Storage { writer.storage }
    var log: @Sendable (String) -> Void { writer.log }
}
