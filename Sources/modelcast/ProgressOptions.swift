import ArgumentParser
import Foundation
import ModelCastCore

extension ProgressMode: ExpressibleByArgument {}

/// `--progress`, declared once for every command that reports progress.
struct ProgressOptions: ParsableArguments {
    // What each mode draws, and $MODELCAST_PROGRESS: docs/cli.md#progress.
    @Option(help: ArgumentHelp("Progress on stderr (default: auto; none with --json).", valueName: "MODE"))
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
