import Foundation

// The exit status each storage error ends a command with (see ExitStatus).

extension StorageError: ExitStatusProviding {
    /// A conflict, a changed object, a proof that failed: refusals (running again changes nothing).
    public var exitStatus: ExitStatus { .refused }
}

extension S3Error: ExitStatusProviding {
    /// The store answered with an error (credentials, permissions, its own failure).
    public var exitStatus: ExitStatus { .io }
}

extension S3TransportError: ExitStatusProviding {
    var exitStatus: ExitStatus { .io }
}

extension S3ResponseTooLarge: ExitStatusProviding {
    var exitStatus: ExitStatus { .io }
}

extension NetworkFailure: ExitStatusProviding {
    /// Refused, unreachable, a failed TLS handshake, a stall: the network.
    public var exitStatus: ExitStatus { .io }
}
