import Foundation

/// A setting the command needs was given nowhere: not on the command line, not in the
/// config file, not in the environment. Like a missing option, a usage error (status 2):
/// the command line is incomplete, and the message names what to add.
public struct MissingSetting: Error, LocalizedError, Equatable, Sendable, ExitStatusProviding {
    public let message: String

    public init(_ message: String) { self.message = message }

    public var errorDescription: String? { message }
    public var exitStatus: ExitStatus { .usage }
}
