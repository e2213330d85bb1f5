import Foundation

/// The exit statuses every modelcast command follows (documented in the README and
/// `modelcast --help`), so a pipeline can tell what to do from the number alone.
public enum ExitStatus: Int32, Sendable, CaseIterable {
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
    public var name: String {
        switch self {
        case .success: return "success"
        case .refused: return "refused"
        case .usage: return "usage"
        case .io: return "io"
        }
    }

    /// The status for an error a command threw.
    public init(for error: Error) {
        switch error {
        case let error as ModelCastError:
            switch error {
            case .io, .unreadable, .archive, .crypto, .changedWhilePacking: self = .io
            default: self = .refused
            }
        case is FetchError, is S3Error, is S3TransportError, is S3ResponseTooLarge: self = .io
        case let error as StorageError:
            switch error {
            case .conflict, .preconditionFailed, .tooLarge, .invalidKey, .missing, .contentMismatch: self = .refused
            }
        case is DecodingError: self = .refused
        default:
            // Anything else comes from the system or a library below modelcast (a socket, a file).
            self = .io
        }
    }
}

/// The `--json` error object: `{"error": {"code": 1, "kind": "refused", "message": "…"}}`.
public func jsonErrorObject(status: ExitStatus, message: String) -> String {
    JSONValue.object([
        .init("error", .object([
            .init("code", .int(Int64(status.rawValue))),
            .init("kind", .string(status.name)),
            .init("message", .string(message)),
        ])),
    ]).serialized()
}
