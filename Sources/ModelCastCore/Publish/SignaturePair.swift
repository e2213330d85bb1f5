import Foundation

/// The live manifest and its detached signature (`manifest.json.minisig`) are two
/// objects, and no store replaces two objects at once: a run stopped between the two
/// writes (killed, or its machine lost) leaves a signature beside a manifest it does not
/// sign, which devices and stock `minisign` refuse. Devices keep what they have installed
/// until the pair matches again; the next command that writes the target puts it right
/// before doing anything else:
///
/// - a signature of a newer release beside an older live manifest (a run stopped after its
///   signature write): the live manifest's own signature goes back, from the copy every
///   signed release keeps beside its history record (`TargetLayout.signatureRecordKey`);
/// - a signature of an older release beside a newer, unsigned live manifest (a run stopped
///   before removing the signature it replaced): the signature goes.
///
/// The signature's sequence (its trusted comment) is compared with the live record's;
/// no key is needed to tell them apart.
enum SignaturePair {
    /// What the target's pair needs.
    enum Repair: Equatable {
        /// Put back the live release's own signature, kept under `recordKey`.
        case restore(recordKey: String, liveSequence: Int64, signatureSequence: Int64)
        /// Remove a signature left beside an unsigned, newer live manifest.
        case remove(liveSequence: Int64, signatureSequence: Int64)
    }

    /// The repair `state` needs, or nil when its pair matches (or modelcast cannot tell:
    /// no signature, a signature it did not write, a live manifest no record explains).
    static func repair(for state: TargetState, manifestKey: String) -> Repair? {
        guard let live = state.liveRecord, let signature = state.signatureData,
              let parsed = try? MinisignSignature(fileContents: String(decoding: signature, as: UTF8.self)),
              let comment = TrustedComment(parsing: parsed.trustedComment), comment.sequence != live.sequence else { return nil }
        if comment.sequence > live.sequence {
            return .restore(recordKey: TargetLayout.signatureRecordKey(manifestKey: manifestKey, sequence: live.sequence),
                            liveSequence: live.sequence, signatureSequence: comment.sequence)
        }
        return .remove(liveSequence: live.sequence, signatureSequence: comment.sequence)
    }

    /// The message `verify` and a dry run give for a mismatched pair.
    static func describe(_ repair: Repair, location: String, manifestKey: String) -> String {
        let signatureKey = SignedManifest.signatureKey(for: manifestKey)
        switch repair {
        case .restore(_, let live, let signed):
            return "\(location)/\(signatureKey) signs sequence \(signed), but the live manifest is sequence \(live): a run stopped between writing the signature and the manifest. Devices keep what they have until the pair matches; the next publish, rollback, resign, promote or prune puts the live manifest's signature back"
        case .remove(let live, let signed):
            return "\(location)/\(signatureKey) signs sequence \(signed), but the live manifest is sequence \(live), published unsigned: a run stopped before removing the old signature. The next publish, rollback, resign, promote or prune removes it"
        }
    }
}

extension Publisher {
    /// Reads the target for a command that writes `manifestKey`, first putting right a
    /// live pair a stopped run left mismatched (`SignaturePair`). A dry run only says so.
    func loadForWriting(manifestKey: String, reading: TargetState.HistoryRead = .indexed, dryRun: Bool) async throws -> TargetState {
        let state = try await TargetState.load(from: storage, manifestKey: manifestKey, reading: reading)
        guard let repair = SignaturePair.repair(for: state, manifestKey: manifestKey) else { return state }
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
