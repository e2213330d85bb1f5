import Foundation

/// What was found where a manifest's detached signature (`.minisig`) should be.
enum DetachedSignature {
    /// Its bytes.
    case found(Data)
    /// There is none (HTTP 404/403, or no file).
    case absent
    /// It could not be read (another HTTP status, too large, a failed fetch); the
    /// reason has already been reported as a failure.
    case unavailable
}

/// The manifest signature checks `verify` runs first: the detached
/// `manifest.json.minisig` and, for the modelcast profile, an inline signature.
struct SignatureCheck {
    let publicKeys: [MinisignPublicKey]
    let requireSignature: Bool
    let expiryWarning: TimeInterval
    let now: Date
    /// Accept a legacy `Ed` (not prehashed) signature; modelcast writes only `ED`.
    var allowLegacy = false

    /// True when there is anything to check (keys given, or a signature required).
    var isEnabled: Bool { !publicKeys.isEmpty || requireSignature }

    /// Checks every signature `manifest` has. `detached` is the `.minisig` beside it.
    /// Returns the trusted comment modelcast wrote, once verified.
    func run(manifest: Data, detached: DetachedSignature, manifestName: String, source: String, log: CheckLog) -> TrustedComment? {
        // Each signature's errors name its file: `manifest.json.minisig`, or the manifest's
        // inline signature.
        var signatures: [(check: VerifyCheckID, name: String, file: String, message: Data)] = []
        if case .found(let detached) = detached {
            signatures.append((.manifestSignature, "\(manifestName).minisig", String(decoding: detached, as: UTF8.self), manifest))
        }
        if let inline = InlineSignature.split(manifest) {
            do {
                signatures.append((.manifestInlineSignature, "the inline signature of \(manifestName)", try InlineSignature.signatureFile(fromMember: inline.member), inline.signed))
            } catch {
                log.add(.fail, .manifestInlineSignature, source, String(describing: error))
            }
        }
        guard !signatures.isEmpty else {
            // An unavailable detached signature was reported (and failed) where it was fetched:
            // the manifest may well be signed, so do not call it unsigned.
            if case .unavailable = detached { return nil }
            log.add(.fail, .manifestSignature, source, "not signed: no \(manifestName).minisig beside it and no inline signature")
            return nil
        }
        var comment: TrustedComment?
        for signature in signatures {
            let verified = check(signature.file, name: signature.name, message: signature.message, as: signature.check, manifestName: manifestName, source: source, log: log)
            comment = comment ?? verified
        }
        return comment
    }

    /// Checks one minisign signature file, named `name` in what it logs (under `check`),
    /// over `message`; returns the trusted comment modelcast wrote, once verified.
    func check(_ file: String, name: String, message: Data, as check: VerifyCheckID, manifestName: String, source: String, log: CheckLog) -> TrustedComment? {
        do {
            let parsed = try MinisignSignature(fileContents: file, source: name)
            guard !publicKeys.isEmpty else {
                log.add(.warn, check, source, "signed by key \(parsed.keyID.hex), not checked: pass --public-key to check it")
                return nil
            }
            guard parsed.algorithm == .prehashed || allowLegacy else {
                log.add(.fail, check, source, "a legacy minisign signature ('Ed', the message signed without prehashing, by key \(parsed.keyID.hex)); modelcast writes only prehashed 'ED' signatures: re-sign it (modelcast resign), or pass --allow-legacy-signature to accept it")
                return nil
            }
            let verified = try parsed.verify(message: [UInt8](message), publicKeys: publicKeys, source: name, allowLegacy: allowLegacy)
            let legacy = verified.algorithm == .legacy ? " (legacy 'Ed' signature, accepted by --allow-legacy-signature)" : ""
            log.add(.pass, check, source, "good signature by key \(verified.keyID.hex)\(legacy); trusted comment: \(verified.trustedComment)")
            guard let comment = TrustedComment(parsing: verified.trustedComment) else { return nil }
            if comment.file != manifestName {
                log.add(.fail, check, source, "the signature is for file \(comment.file), not \(manifestName) (a signature moved from another manifest)")
            }
            return comment
        } catch {
            log.add(.fail, check, source, String(describing: error))
            return nil
        }
    }

    /// The signed facts against the manifest's own: the same sequence and expiry.
    func crossCheck(_ comment: TrustedComment, facts: ManifestFacts, source: String, log: CheckLog) {
        for problem in comment.mismatches(sequence: facts.sequence, expiresAt: facts.expiresAt) {
            log.add(.fail, .manifestSignature, source, problem)
        }
        if facts.expiresAt == nil, let expiresAt = comment.expiresAt {
            checkExpiry(expiresAt, source: source, log: log, now: now, warning: expiryWarning)
        }
    }
}

/// Fails an expired manifest, warns when expiry is near (the freeze-attack defence).
func checkExpiry(_ expiresAt: String, source: String, log: CheckLog, now: Date, warning: TimeInterval) {
    guard let expiry = parseTimestamp(expiresAt) else {
        log.add(.fail, .manifestExpiry, source, "expires_at '\(expiresAt)' is not an RFC 3339 time")
        return
    }
    if expiry <= now {
        log.add(.fail, .manifestExpiry, source, "expired at \(expiresAt): devices must not trust it; re-sign it (modelcast resign)")
    } else if expiry.timeIntervalSince(now) < warning {
        log.add(.warn, .manifestExpiry, source, "expires soon, at \(expiresAt): re-sign it (modelcast resign)")
    } else {
        log.add(.pass, .manifestExpiry, source, "valid until \(expiresAt)")
    }
}
