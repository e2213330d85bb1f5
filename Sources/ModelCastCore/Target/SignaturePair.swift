import Foundation

/// The live manifest and its detached signature (`manifest.json.minisig`) are two
/// objects, and no store replaces two objects at once: a run stopped between the two
/// writes (killed, or its machine lost) leaves a signature beside a manifest it does not
/// sign, which stock `minisign` refuses. Devices (ModelCastClient) then prove the live
/// manifest with the signature its release kept beside its history record, when there is
/// one; the next command that writes the target puts the pair right before doing anything
/// else:
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
    /// The live release's own signature goes back whenever it kept one: a signature of an
    /// older release beside a newer, signed manifest is what two runs racing leave (each
    /// writes its signature before its manifest), and removing it would leave the live
    /// manifest unsigned. Only without a kept signature (an unsigned release) is it removed.
    static func repair(for state: TargetState, manifestKey: String, storage: any Storage) async throws -> Repair? {
        guard let live = state.liveRecord, let signature = state.signatureData,
              // try?: a signature that does not parse names no release: nothing to repair (verify reports it).
              let parsed = try? MinisignSignature(fileContents: String(decoding: signature, as: UTF8.self)),
              let comment = TrustedComment(parsing: parsed.trustedComment), comment.sequence != live.sequence else { return nil }
        let recordKey = TargetLayout.signatureRecordKey(manifestKey: manifestKey, sequence: live.sequence)
        let kept = comment.sequence > live.sequence ? true : try await storage.head(recordKey) != nil
        if kept {
            return .restore(recordKey: recordKey, liveSequence: live.sequence, signatureSequence: comment.sequence)
        }
        return .remove(liveSequence: live.sequence, signatureSequence: comment.sequence)
    }

    /// The message `verify` and a dry run give for a mismatched pair.
    static func describe(_ repair: Repair, location: String, manifestKey: String) -> String {
        let signatureKey = SignedManifest.signatureKey(for: manifestKey)
        switch repair {
        case .restore(let recordKey, let live, let signed):
            // What devices make of it is verify's to say (`KeptSignatureCheck`): they accept the
            // live manifest with its kept signature when it is there and proves it.
            return "\(location)/\(signatureKey) signs sequence \(signed), but the live manifest is sequence \(live): a run stopped between writing the signature and the manifest. The next publish, rollback, resign, promote or prune puts the live manifest's signature back (from \(recordKey))"
        case .remove(let live, let signed):
            return "\(location)/\(signatureKey) signs sequence \(signed), but the live manifest is sequence \(live), published unsigned: a run stopped before removing the old signature. The next publish, rollback, resign, promote or prune removes it"
        }
    }
}
