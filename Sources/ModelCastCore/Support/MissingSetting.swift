import Foundation

/// A setting the command needs was given nowhere: not on the command line, not in the
/// config file, not in the environment. Like a missing option, a usage error (status 2):
/// the command line is incomplete, and the message names what to add.
package struct MissingSetting: Error, LocalizedError, Equatable, Sendable, ExitStatusProviding {
    package let message: String

    package init(_ message: String) { self.message = message }

    package var errorDescription: String? { message }
    package var exitStatus: ExitStatus { .usage }
}
