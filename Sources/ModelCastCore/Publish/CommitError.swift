import Foundation

/// A commit that failed part-way, with what is live and what was left in its message.
/// Its exit status is its cause's: a full disk or a lost connection is an input/output
/// failure (3) wherever in the commit it struck; a refusal by the store's rules stays 1.
package struct CommitError: Error, LocalizedError, CustomStringConvertible, ExitStatusProviding {
    package let message: String
    package let exitStatus: ExitStatus

    init(_ message: String, cause: Error) {
        self.message = message
        exitStatus = ExitStatus(for: cause)
    }

    package var description: String { message }
    package var errorDescription: String? { message }
}
