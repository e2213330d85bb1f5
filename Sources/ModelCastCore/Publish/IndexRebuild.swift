import Foundation

/// `history --rebuild-index`: the history index written anew from every record.
package struct IndexRebuilder: TargetWriting {
    package let writer: TargetWriter

    package init(writer: TargetWriter) {
        self.writer = writer
    }

    /// Reads every record and rewrites the history index from them (`history --rebuild-index`).
    /// Returns the state as read: its `index` says what was wrong with the index before.
    package func rebuildIndex(manifestKey: String) async throws -> TargetState {
        let lock = try writer.lockTarget(dryRun: false)
        defer { withExtendedLifetime(lock) {} }
        let state = try await TargetState.load(from: storage, manifestKey: manifestKey, reading: .all)
        guard !state.history.isEmpty else {
            throw ModelCastError.targetState("no release history at \(storage.location)/\(TargetLayout.historyPrefix(manifestKey: manifestKey)): there is nothing to index")
        }
        try await writer.writeIndex(state.indexEntries, manifestKey: manifestKey, ifMatch: state.index.etag)
        return state
    }
}
