import Foundation

extension TargetWriter {
    /// Reads the target for a command that writes `manifestKey`, first putting right a
    /// live pair a stopped run left mismatched (`SignaturePair`). A dry run only says so.
    func loadForWriting(manifestKey: String, reading: TargetState.HistoryRead = .indexed, dryRun: Bool) async throws -> TargetState {
        let state = try await TargetState.load(from: storage, manifestKey: manifestKey, reading: reading)
        guard let repair = try await SignaturePair.repair(for: state, manifestKey: manifestKey, storage: storage) else { return state }
        let signatureKey = SignedManifest.signatureKey(for: manifestKey)
        guard !dryRun else {
            log("warning: " + SignaturePair.describe(repair, location: storage.location, manifestKey: manifestKey))
            return state
        }
        switch repair {
        case .restore(let recordKey, let live, let signed):
            guard let kept = try await storage.get(recordKey, limit: TargetLayout.recordLimit) else {
                throw ModelCastError.targetState("\(storage.location)/\(signatureKey) signs sequence \(signed), but the live manifest is sequence \(live), and that release's signature was not kept (\(recordKey) is missing; it was published before modelcast kept one): run `modelcast resign` to sign the live manifest again")
            }
            let metadata = try ObjectMetadata(of: kept, cacheControl: liveManifestCacheControl(state: state, manifestKey: manifestKey), contentType: SignedManifest.signatureContentType)
            try await storage.replace(signatureKey, data: kept, metadata: metadata, ifMatch: nil)
            log("repaired \(storage.location)/\(signatureKey): it signed sequence \(signed) (a run stopped before its manifest write); the live manifest's own signature (sequence \(live)) is back")
        case .remove(let live, let signed):
            try await storage.delete(signatureKey)
            log("repaired \(storage.location)/\(signatureKey): it signed sequence \(signed), older than the unsigned live manifest (sequence \(live)); it is removed")
        }
        return try await TargetState.load(from: storage, manifestKey: manifestKey, reading: reading)
    }
}
