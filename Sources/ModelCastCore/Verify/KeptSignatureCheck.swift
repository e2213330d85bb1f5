import Foundation

/// What `verify` makes of a live detached signature that does not sign the live manifest,
/// as a device would (ModelCastClient's `keptSignatureProof`): a run stopped between its
/// signature and manifest writes leaves the next release's signature beside the live
/// manifest, and every signed release keeps its own signature beside its history record
/// (`TargetKeys.keptSignatureKey`). When that kept signature proves the manifest (a trusted
/// key, these bytes, this file, sequence and expiry), devices accept the manifest: the
/// live signature's failure becomes a warning (`--strict` fails it), as only stock tools
/// that read the live `.minisig` refuse the pair until the next command puts it right.
struct KeptSignatureCheck {
    let verifier: Verifier
    let signatures: SignatureCheck

    /// What the kept signature says of the manifest.
    enum Outcome {
        /// It proves it: the checks to report in place of the live signature's, and its
        /// trusted comment.
        case proves(TrustedComment, [VerifyCheck])
        /// It does not: why, for the failure that stops the run.
        case fails(String)
        /// The live signature is no other release's (`KeptSignatureLookup`): devices look
        /// for no kept signature, and the live one's failure stands as it is.
        case notLookedUp
    }

    /// True when the live detached signature failed and nothing else did: a failing inline
    /// signature is no stopped run's doing, and a signature that could not be fetched was
    /// never looked at.
    static func applies(to checks: [VerifyCheck]) -> Bool {
        let failed = checks.filter { $0.status == .fail }
        return !failed.isEmpty && failed.allSatisfy { $0.check == VerifyCheckID.manifestSignature.rawValue }
    }

    /// Looks up the signature the release `manifest` claims to be keeps, when the live
    /// signature `liveFile` is another release's, fetched with the live signature's bounds
    /// (size, deadline, URL rules), and checks it as the live one is. `live` are the live
    /// signature's checks; `manifestName` what its signed comment must name.
    func run(manifest: Data, liveFile: Data, url: String, manifestName: String, live: [VerifyCheck], deadline: Date) async -> Outcome {
        let liveFailure = live.first { $0.status == .fail }?.detail ?? "it does not verify"
        // Read before any signature proves it, only to learn which kept signature to
        // fetch: that signature must then prove these bytes and this very sequence.
        let facts: ManifestFacts
        do { facts = try ManifestFacts.read(manifest, profile: verifier.options.profile, source: url) } catch { return .notLookedUp }
        let liveText = String(decoding: liveFile, as: UTF8.self)
        // What the live signature says it signs, unchecked: only for the message.
        guard let signedSequence = (try? MinisignSignature(fileContents: liveText)).flatMap({ TrustedComment(parsing: $0.trustedComment) })?.sequence else {
            return .notLookedUp
        }
        guard facts.sequence != nil else {
            // Only the live signature's comment gives these profiles a sequence, and it may be another release's.
            return .fails("The \(facts.profile.rawValue) profile names no sequence of its own, so no device can find the signature its release kept: they refuse the manifest until \(manifestName).minisig is its own signature again")
        }
        guard let sequence = KeptSignatureLookup.sequence(manifestSequence: facts.sequence, liveSignatureFile: liveText) else { return .notLookedUp }
        let manifestKey = targetKey(ofManifestURL: url)
        let keptKey = TargetKeys.keptSignatureKey(manifestKey: manifestKey, sequence: sequence)
        let root = targetRoot(ofManifestURL: url)
        let keptURL = root + URLParts.percentEncodedPath(keptKey)
        // The kept signature lives in the manifest's target, wherever the artifacts are.
        let own = verifier.manifestRules(manifestURL: url)
        let rules = URLRules(prefixes: own.prefixes.contains(root) ? own.prefixes : own.prefixes + [root], allowHTTP: own.allowHTTP, allowExternalURLs: own.allowExternalURLs)
        let fetcher = verifier.fetcher
        let fetched = CheckLog(origin: { fetcher.origin(of: $0) })
        let kept = "The signature kept for sequence \(sequence), \(keptKey),"
        let file: Data
        switch await verifier.fetchSignature(keptURL, deadline: deadline, rules: rules, log: fetched) {
        case .found(let data): file = data
        case .absent: return .fails("\(kept) is not there either: devices refuse the manifest until the live signature matches")
        case .unavailable: return .fails("\(kept) could not be read: \(fetched.checks.first?.detail ?? "no answer")")
        }
        let checked = CheckLog(origin: { fetcher.origin(of: $0) })
        let comment = signatures.check(String(decoding: file, as: UTF8.self), name: keptKey, message: manifest, as: .manifestSignature,
                                       manifestName: manifestName, source: keptURL, log: checked)
        if let failure = checked.checks.first(where: { $0.status == .fail }) {
            return .fails("\(kept) does not prove it either: \(failure.detail)")
        }
        guard let comment else { return .fails("\(kept) carries no trusted comment modelcast wrote (it binds no sequence)") }
        if let problem = comment.mismatches(sequence: sequence, expiresAt: facts.expiresAt).first {
            return .fails("\(kept) does not prove it either: \(problem)")
        }
        let warning = CheckLog(origin: { fetcher.origin(of: $0) })
        let heals = signedSequence > sequence
            ? "until the next publish, rollback, resign, promote or prune puts the live manifest's signature back"
            : "until \(manifestName).minisig is this manifest's signature again"
        warning.add(.warn, .manifestSignature, url, "\(manifestName).minisig is the signature of sequence \(signedSequence), not of this manifest (sequence \(sequence)): \(liveFailure). A run stopped between writing the signature and the manifest leaves this. Devices that require a signature accept the manifest with the signature its release kept beside its history record, \(keptKey) (checked next); stock `minisign -V` with \(manifestName).minisig refuses it \(heals)")
        return .proves(comment, warning.checks + checked.checks)
    }
}
