import Foundation

// The exit status each storage error ends a command with (see ExitStatus).

extension StorageError: ExitStatusProviding {
    /// A conflict, a changed object, a proof that failed: refusals (running again changes nothing).
    package var exitStatus: ExitStatus { .refused }
}

extension S3Error: ExitStatusProviding {
    /// A bucket that does not exist is refused (running again changes nothing, as for a
    /// directory target whose parent is missing); any other answer (credentials,
    /// permissions, the store's own failure) is I/O.
    package var exitStatus: ExitStatus { code == "NoSuchBucket" ? .refused : .io }
}

extension S3TransportError: ExitStatusProviding {
    var exitStatus: ExitStatus { .io }
}

extension S3ResponseTooLarge: ExitStatusProviding {
    var exitStatus: ExitStatus { .io }
}

extension NetworkFailure: ExitStatusProviding {
    /// Refused, unreachable, a failed TLS handshake, a stall: the network.
    package var exitStatus: ExitStatus { .io }
}

extension MissingCredentials: ExitStatusProviding {
    package var exitStatus: ExitStatus { .io }
}
