import Foundation
import ModelCastFormat

/// Why an update did not happen. A failed update leaves every installed model as it was
/// (when even putting them back failed, `undoFailed` says so). Cancelling the task that
/// runs an update throws `CancellationError` instead.
///
/// Every message names what it is about (the manifest URL, the model, the file, the
/// value), with values from the manifest quoted and their control characters escaped.
public enum ClientError: Error, Equatable, Sendable, CustomStringConvertible, LocalizedError {
    /// The server answered with this HTTP status.
    case http(url: String, status: Int)
    /// The connection failed or dropped (after the retries); the reason says how in plain
    /// words (refused, timed out, lost, no such host…).
    case network(url: String, reason: String)
    /// The body arrived slower than `ClientConfiguration.minimumTransferRate`: `received`
    /// bytes in a window of `seconds` (`transferRateWindow`). The request was abandoned
    /// and its connection closed.
    case tooSlow(url: String, received: Int64, seconds: TimeInterval, minimumRate: Int)
    /// A metadata request (manifest, signature, segment index, model signature bundle)
    /// did not end within `ClientConfiguration.metadataDeadline` seconds (`received`
    /// bytes had arrived). The request was abandoned and its connection closed.
    case deadlineExceeded(url: String, received: Int64, deadline: TimeInterval)
    /// The manifest is larger than `ClientConfiguration.maxManifestBytes`.
    case manifestTooLarge(url: String, limit: Int)
    /// Another small object the client reads into memory is larger than it reads of it:
    /// `object` is "signature" (a minisign signature, 16 KiB at most) or "segment index"
    /// (the size the manifest gives it).
    case tooLarge(url: String, object: String, limit: Int64)
    /// The manifest is not a modelcast manifest this client reads, or one of its values is
    /// refused (the reason names the field's JSON path and the value).
    case invalidManifest(url: String, reason: String)
    /// The manifest is another channel's (served, by mistake or by an attacker, at this URL).
    case wrongChannel(url: String, expected: String, actual: String)
    /// Keys are configured and the manifest carries no signature.
    case unsigned(url: String)
    /// The signature is malformed, by an untrusted key, or does not match the manifest.
    case badSignature(url: String, reason: String)
    /// A key set of the chain from the app's trusted key set (`ClientConfiguration.trustedKeySet`)
    /// is refused: the document at `path` (`keys/N.json` under the target), of `version`,
    /// is not signed by the root thresholds, breaks the format, leaves a gap, or is the
    /// newest and has expired (`reason` says which). Nothing is installed.
    case keySetRefused(path: String, version: Int64, reason: String)
    /// Fewer than the manifest threshold of the current key set's manifest keys signed
    /// the manifest (`manifest.json.minisig` and `manifest.json.sigs`), e.g. it is signed by
    /// a revoked key or by one key of a 2-of-3 set. `reason` names who signed and why the
    /// others did not count.
    case manifestThresholdNotMet(url: String, keySetVersion: Int64, reason: String)
    /// The manifest's `expires_at` (or its signed expiry) has passed: a frozen or replayed manifest.
    case expired(url: String, expiresAt: String, now: String)
    /// The manifest's sequence is lower than one this device already accepted (a replay).
    case replayed(url: String, sequence: Int64, highestAccepted: Int64)
    /// The release needs a newer app.
    case requiresNewerApp(minimum: String, current: String)
    /// A downloaded file's SHA-256 is not the manifest's.
    case hashMismatch(model: String, file: String, expected: String, actual: String)
    /// A server sent more (or, finally, fewer) bytes than the manifest's size.
    case sizeMismatch(model: String, file: String, expected: Int64, actual: Int64)
    /// A resumed download got an answer that does not continue the partial file.
    case badRangeResponse(url: String, reason: String)
    /// Not enough free space for the download and the install. (Clients before 1.2.0 threw
    /// it before downloading; this one throws `insufficientSpace`, naming the model.)
    case insufficientDiskSpace(needed: Int64, available: Int64)
    /// Before any download: the volume has `free` bytes, and the models of the update up to
    /// `model` need `needed` (bytes still to download, what their installs add, and
    /// `Installer.reservedSpace`). Nothing was downloaded.
    case insufficientSpace(model: String, needed: Int64, free: Int64)
    /// Before any download: installing the update (with `model`) would take `needed` bytes
    /// of storage, more than `ClientConfiguration.storageBudget` (`budget`), even after
    /// evicting every on-demand model it may; `wouldEvict` names, in order, the models that
    /// would have to go for it to fit (essential, prefetch or in use among them). Nothing
    /// was downloaded or evicted.
    case overStorageBudget(model: String, needed: Int64, budget: Int64, wouldEvict: [String])
    /// `request(_:)`: the model's licence asks for acceptance and this device has not
    /// recorded it (`ModelUpdater.acceptLicence`) for these terms. Nothing was downloaded.
    case licenceNotAccepted(model: String, spdx: String?, url: String?)
    /// `request(_:)`: the device does not meet the model's download conditions now (or the
    /// app has not reported them): `reason` says which (`WaitReason`). Nothing was downloaded.
    case conditionsNotMet(model: String, reason: String)
    /// A zip whose entries could escape the model's directory, are not plain files, or
    /// unpack to more than they declare or than the disk has room for.
    case unsafeArchive(model: String, file: String, reason: String)
    /// A local file operation failed (the reason is the system's, e.g. "No space left on device").
    case io(path: String, reason: String)
    /// The `ClientConfiguration` has a value the client cannot use.
    case configuration(reason: String)
    /// An update failed (`cause`) and putting the models already switched back failed too:
    /// `models` names those left on the new version.
    case undoFailed(cause: String, models: [String])
    /// `request(_:)`: the manifest names no such model for this device (after the rollout's
    /// choice), or the name is not a model name.
    case unknownModel(url: String, model: String)
    /// `request(_:)`: this device meets none of the model's variants and has none of it
    /// installed. `reasons`: per variant, in the manifest's order, what the device lacks.
    case noVariantForDevice(model: String, reasons: [String])
    /// `reportUnusable`: the model is not installed.
    case notInstalled(model: String)
    /// `reportUnusable`: no previous version of the model is kept to go back to
    /// (`keepPreviousVersions`, or the model was installed once only); nothing changed.
    case noPreviousVersion(model: String, version: String)
    /// `ModelSigningPublicKey(pem:)`: the text is not a PEM ECDSA P-256 public key.
    case invalidModelSigningKey(reason: String)
    /// A model-signing key is pinned and the manifest names no `model_signature` for the
    /// version this device would switch to.
    case modelSignatureMissing(model: String, version: String)
    /// The model signature was made with another key than the pinned one (its key hint
    /// names the signer's).
    case modelSignatureUntrustedKey(model: String, keyHint: String, pinnedHint: String)
    /// The model signature bundle is malformed, its signature does not verify with the
    /// pinned key (the statement was altered, or another key signed it without a hint), or
    /// the statement it signs is malformed.
    case badModelSignature(model: String, url: String, reason: String)
    /// The version's files on disk are not those the verified model signature lists:
    /// one line per changed, missing or extra file.
    case modelSignatureMismatch(model: String, version: String, differences: [String])
    /// The version would take more bytes installed (a zip's entries as they declare their
    /// sizes, plus the plain files) than `ClientConfiguration.maxInstallBytes` allows.
    case installTooLarge(model: String, version: String, bytes: Int64, limit: Int64)
    /// The version's install needs more free space than the volume has, less the
    /// `reserve` the client always leaves free; refused before anything is unpacked.
    case insufficientSpaceToInstall(model: String, version: String, bytes: Int64, available: Int64, reserve: Int64)
    /// Another process (an app extension, a second app instance) holds the client's
    /// directory for an update or a revert, and did not let it go within `waited` seconds.
    case directoryBusy(path: String, waited: Int)

    public var description: String {
        switch self {
        case .http(let url, let status): return "\(url): HTTP \(status)"
        case .network(let url, let reason): return "\(url): \(reason)"
        case .tooSlow(let url, let received, let seconds, let minimumRate):
            return "\(url): the transfer brought \(received) bytes in \(formatSeconds(seconds)) s, less than the minimum of \(minimumRate) bytes/s; abandoned"
        case .deadlineExceeded(let url, let received, let deadline):
            return "\(url): the transfer took longer than the \(formatSeconds(deadline)) s allowed for metadata (\(received) bytes arrived); abandoned"
        case .manifestTooLarge(let url, let limit): return "\(url): the manifest is larger than \(limit) bytes"
        case .tooLarge(let url, let object, let limit): return "\(url): the \(object) is larger than \(limit) bytes"
        case .invalidManifest(let url, let reason): return "\(url): not a usable modelcast manifest: \(reason)"
        case .wrongChannel(let url, let expected, let actual):
            return "\(url): the manifest is channel \(quotedValue(actual))'s, and this app follows channel '\(expected)'"
        case .unsigned(let url): return "\(url): the manifest is not signed, and this app trusts only signed manifests"
        case .badSignature(let url, let reason): return "\(url): bad signature: \(reason)"
        case .keySetRefused(let path, let version, let reason): return "key set \(path) (version \(version)) refused: \(reason)"
        case .manifestThresholdNotMet(let url, let keySetVersion, let reason):
            return "\(url): not signed by enough manifest keys of key set \(keySetVersion): \(reason)"
        case .expired(let url, let expiresAt, let now): return "\(url): the manifest expired at \(quotedValue(expiresAt)) (now \(now))"
        case .replayed(let url, let sequence, let highest): return "\(url): sequence \(sequence) is lower than \(highest), already accepted (a replayed manifest)"
        case .requiresNewerApp(let minimum, let current): return "the release needs app version \(quotedValue(minimum)) or later; this is \(quotedValue(current))"
        case .hashMismatch(let model, let file, let expected, let actual): return "model \(model), file \(quotedValue(file)): SHA-256 \(actual), expected \(expected)"
        case .sizeMismatch(let model, let file, let expected, let actual): return "model \(model), file \(quotedValue(file)): \(actual) bytes, expected \(expected)"
        case .badRangeResponse(let url, let reason): return "\(url): cannot resume: \(reason)"
        case .insufficientDiskSpace(let needed, let available): return "\(needed) bytes of free space needed, \(available) available"
        case .insufficientSpace(let model, let needed, let free):
            return "model \(quotedValue(model)): \(needed) bytes of free space needed (downloads, install and the \(Installer.reservedSpace) always left free), the volume has \(free); nothing was downloaded"
        case .overStorageBudget(let model, let needed, let budget, let wouldEvict):
            let evict = wouldEvict.isEmpty ? "no other model is installed to remove" : "it would have to remove " + wouldEvict.map { quotedValue($0) }.joined(separator: ", ")
            return "model \(quotedValue(model)): the models would take \(needed) bytes, more than the storage budget of \(budget) (storageBudget); \(evict); nothing was downloaded or removed"
        case .licenceNotAccepted(let model, let spdx, let url):
            return "model \(quotedValue(model)): " + WaitReason.licence(spdx: spdx, url: url).description + " (acceptLicence); nothing was downloaded"
        case .conditionsNotMet(let model, let reason): return "model \(quotedValue(model)) \(reason); nothing was downloaded"
        case .unsafeArchive(let model, let file, let reason): return "model \(model), file \(quotedValue(file)): \(reason)"
        case .io(let path, let reason): return "\(path): \(reason)"
        case .configuration(let reason): return "client configuration: \(reason)"
        case .undoFailed(let cause, let models):
            return "\(cause); putting the models back failed too, so \(models.joined(separator: ", ")) stayed on the new version"
        case .unknownModel(let url, let model): return "\(url): the manifest names no model \(quotedValue(model)) for this device"
        case .noVariantForDevice(let model, let reasons):
            return "model \(quotedValue(model)): this device meets none of its variants (\(reasons.joined(separator: "; ")))"
        case .notInstalled(let model): return "model \(quotedValue(model)) is not installed on this device"
        case .noPreviousVersion(let model, let version):
            return "model \(quotedValue(model)): no version before \(quotedValue(version)) is kept on this device to go back to (keepPreviousVersions); nothing changed"
        case .invalidModelSigningKey(let reason): return "model-signing public key: \(reason)"
        case .modelSignatureMissing(let model, let version):
            return "model \(quotedValue(model)) \(quotedValue(version)): the manifest names no model_signature, and this app installs only models signed with its model-signing key"
        case .modelSignatureUntrustedKey(let model, let keyHint, let pinnedHint):
            return "model \(quotedValue(model)): its model signature was made with another key (key hint \(quotedValue(keyHint))), not the one this app pins (hint \(pinnedHint))"
        case .badModelSignature(let model, let url, let reason): return "model \(quotedValue(model)): model signature \(url): \(reason)"
        case .modelSignatureMismatch(let model, let version, let differences):
            return "model \(quotedValue(model)) \(quotedValue(version)) does not match its model signature: " + differences.joined(separator: "; ")
        case .installTooLarge(let model, let version, let bytes, let limit):
            return "model \(quotedValue(model)) \(quotedValue(version)): \(bytes) bytes installed, more than the \(limit) this app allows (maxInstallBytes); nothing was unpacked"
        case .insufficientSpaceToInstall(let model, let version, let bytes, let available, let reserve):
            return "model \(quotedValue(model)) \(quotedValue(version)): \(bytes) bytes of free space needed to install, the volume has \(available) (and \(reserve) are always left free); nothing was unpacked"
        case .directoryBusy(let path, let waited):
            return "\(path): another process has been updating this directory for more than \(waited) s; try again later"
        }
    }

    public var errorDescription: String? { description }
}

extension ClientError {
    /// A failure another attempt may get past (a download then resumes where it stopped).
    /// A request abandoned as too slow is not: only an artifact's download tries again
    /// (`Downloader`), so a trickling server costs a metadata request one window at most.
    var isRetriable: Bool {
        switch self {
        case .network, .badRangeResponse: return true
        case .http(_, let status): return (500...599).contains(status)
        default: return false
        }
    }

    /// A request abandoned below the minimum rate: an artifact's download tries again
    /// (resuming), at most `retries` times, so a trickle costs it (retries + 1) windows.
    var isTooSlow: Bool {
        if case .tooSlow = self { return true }
        return false
    }

    /// A file operation's error as a person reads it: the system's reason (errno's text)
    /// rather than a Foundation error domain and code.
    static func io(_ path: URL, _ error: Error) -> ClientError {
        if let error = error as? ClientError { return error }
        return .io(path: path.path, reason: readableReason(error))
    }
}

/// Seconds as a person writes them: "30", "0.5".
func formatSeconds(_ seconds: TimeInterval) -> String {
    String(format: "%g", seconds)
}

/// The POSIX reason under a Foundation file error ("No space left on device"), else its description.
func readableReason(_ error: Error) -> String {
    let ns = error as NSError
    if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
        return String(cString: strerror(Int32(underlying.code)))
    }
    if ns.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(ns.code))) }
    if let posix = error as? POSIXError { return String(cString: strerror(posix.code.rawValue)) }
    switch ns.code {
    case NSFileWriteOutOfSpaceError: return "No space left on device"
    case NSFileNoSuchFileError, NSFileReadNoSuchFileError: return "No such file or directory"
    case NSFileWriteNoPermissionError, NSFileReadNoPermissionError: return "Permission denied"
    case NSFileWriteFileExistsError: return "File exists"
    default: return ns.localizedDescription
    }
}
