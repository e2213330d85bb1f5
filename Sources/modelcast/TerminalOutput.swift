import Foundation
import ModelCastCore

// Everything the CLI prints goes through these two: results on standard output,
// messages on standard error, each passed through `terminalSafe` (values from a
// manifest, a model file or a request never reach a terminal raw) and
// `redactingURLCredentials` (a password given in a URL is never echoed). This
// `print` shadows the standard library's for the whole executable.

/// Writes `items` to standard output, terminal-safe.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    let text = items.map { "\($0)" }.joined(separator: separator) + terminator
    FileHandle.standardOutput.write(Data(terminalSafe(redactingURLCredentials(text)).utf8))
}

/// Writes one line to standard error, terminal-safe.
func printError(_ text: String) {
    FileHandle.standardError.write(Data((terminalSafe(redactingURLCredentials(text)) + "\n").utf8))
}
