import ArgumentParser
import Foundation
import ModelCastCore

extension ProgressMode: ExpressibleByArgument {}

/// `--progress`, declared once for every command that reports progress.
struct ProgressOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "How progress shows on standard error (default: auto; none with --json).",
        discussion: """
            auto draws a bar (bytes, rate, ETA; a line per item in flight) when standard error is \
            a terminal, and otherwise prints a plain line every 10% of an item or every 10 s, \
            whichever comes first, plus a final 100% line; it shows nothing for work done within \
            a second. bar and lines force one of the two; json prints one object per line \
            ({"event": "start"|"progress"|"finish", "id", "label", "done", "total"}, every 1% or \
            1 s); none prints nothing. $MODELCAST_PROGRESS sets it too. Progress never goes to \
            standard output.
            """,
        valueName: "MODE"))
    var progress: ProgressMode?

    func validate() throws {
        if let value = ProcessInfo.processInfo.environment["MODELCAST_PROGRESS"], ProgressMode(rawValue: value) == nil {
            throw ValidationError("MODELCAST_PROGRESS must be one of \(ProgressMode.allCases.map(\.rawValue).joined(separator: ", ")), got '\(value)'")
        }
    }

    /// The display on standard error: --progress, else $MODELCAST_PROGRESS, else auto
    /// (none with `json`: a --json run shows progress only when asked).
    func display(json: Bool, environment: [String: String] = ProcessInfo.processInfo.environment) -> ProgressDisplay {
        let mode = progress ?? environment["MODELCAST_PROGRESS"].flatMap(ProgressMode.init(rawValue:)) ?? (json ? .none : .auto)
        return ProgressDisplay(mode: mode, console: .standardError(environment: environment))
    }
}
