extension ClientError {
    /// What kind of failure an error is, for an app's (or a command's) reaction to it: a
    /// device program exits 1 for `.refused`, 3 for `.network` and `.io` (modelcast's
    /// exit codes, docs/output.md), and treats `.configuration` as its own mistake.
    public enum Kind: Sendable, Equatable {
        /// The manifest, a signature, an object or a rule said no (a bad or hostile
        /// manifest, a wrong digest or size, an expired or replayed manifest, an unsafe
        /// archive, a model signature that does not hold, a model or version not there).
        /// Trying again changes nothing until the server or the request does.
        case refused
        /// A request failed: an HTTP error status, a connection refused, lost or timed
        /// out, a resume the server could not continue, a transfer abandoned as too slow
        /// or past its deadline. Trying again later may work; a later update resumes.
        case network
        /// A local file operation failed, the disk lacks the space, or another process
        /// holds the directory past the lock's timeout.
        case io
        /// The `ClientConfiguration` (or a key it names) has a value the client cannot use.
        case configuration
    }

    /// What kind of failure this is.
    public var kind: Kind {
        switch self {
        case .http, .network, .tooSlow, .deadlineExceeded, .badRangeResponse:
            return .network
        case .io, .insufficientDiskSpace, .insufficientSpaceToInstall, .directoryBusy, .undoFailed:
            return .io
        case .configuration, .invalidModelSigningKey:
            return .configuration
        case .manifestTooLarge, .tooLarge, .invalidManifest, .wrongChannel, .unsigned, .badSignature, .keySetRefused, .manifestThresholdNotMet, .expired, .replayed,
             .requiresNewerApp, .hashMismatch, .sizeMismatch, .unsafeArchive, .unknownModel, .noVariantForDevice,
             .notInstalled, .noPreviousVersion, .modelSignatureMissing, .modelSignatureUntrustedKey, .badModelSignature,
             .modelSignatureMismatch, .installTooLarge, .insufficientSpace, .overStorageBudget, .licenceNotAccepted, .conditionsNotMet:
            return .refused
        }
    }
}
