import Foundation

/// The exit statuses every modelcast command follows (documented in docs/output.md and
/// `modelcast --help`), so a pipeline can tell what to do from the number alone.
package enum ExitStatus: Int32, Sendable, CaseIterable {
    /// The command did what was asked (verify: every check passed).
    case success = 0
    /// Refused or failed a check: a bad model, a version rule, a conflict with what the
    /// target holds, a failed verify check, a bad signature. Running again changes nothing.
    case refused = 1
    /// The command line could not be parsed: an unknown option, a missing argument, a
    /// value of the wrong type, or no command at all.
    case usage = 2
    /// Input/output or network failure: a file that cannot be read or written, a store
    /// or server that cannot be reached or answers with an error. Running again may help.
    case io = 3

    /// The name used in `--json` error objects.
    package var name: String {
        switch self {
        case .success: return "success"
        case .refused: return "refused"
        case .usage: return "usage"
        case .io: return "io"
        }
    }

    /// The status for an error a command threw: its own, or for errors from below
    /// modelcast (a socket, a file, a library), an I/O failure.
    package init(for error: Error) {
        if let error = error as? any ExitStatusProviding {
            self = error.exitStatus
        } else if error is DecodingError {
            self = .refused
        } else {
            self = .io
        }
    }
}

/// An error that says which documented exit status it ends a command with. Each error
/// type declares its own, in its own folder, so this one knows none of them.
package protocol ExitStatusProviding: Error {
    var exitStatus: ExitStatus { get }
}

extension ModelCastError: ExitStatusProviding {
    package var exitStatus: ExitStatus {
        switch self {
        // A missing input is a file that cannot be read (docs/output.md), not a refusal.
        case .io, .unreadable, .notFound, .archive, .crypto, .changedWhilePacking: return .io
        // No default: a new case says here which status it ends a command with.
        case .emptyDirectory, .symlink, .specialFile, .nameCollision, .nonUTF8Name,
             .controlCharacterInName, .unsafeName, .invalidModel, .usage:
            return .refused
        case .passphraseRequired, .wrongPassphrase, .modelSigningKey, .modelSignatureMismatch:
            return .refused
        // What a target, a store or a served manifest holds.
        case .targetState, .versionConflict, .liveReleaseConflict, .rollbackTargetUnavailable, .invalidManifest,
             .undecodableBody, .expiredManifest, .commitFailed:
            return .refused
        }
    }
}

extension FormatError: ExitStatusProviding {
    package var exitStatus: ExitStatus {
        switch self {
        // No default: a new case says here which status it ends a command with.
        case .invalidValue, .signingKey, .invalidComment, .malformedSignature, .unsupportedSignatureAlgorithm,
             .untrustedSigningKey, .signatureMismatch, .trustedCommentMismatch, .invalidModelSignature:
            return .refused
        // What a target or a served manifest holds.
        case .invalidRecord, .invalidInlineSignature:
            return .refused
        }
    }
}
