import ArgumentParser
import ModelCastCore

struct ModelCast: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "modelcast",
        abstract: "Publish on-device ML models for over-the-air delivery from static hosting.",
        discussion: """
            modelcast packs a model (GGUF, Core ML, TFLite, ONNX or any file or directory), \
            hashes it, and publishes it with a manifest that apps fetch to update their models.
            Results go to standard output, progress and logs to standard error. `modelcast \
            --version` prints modelcast's version.
            Exit status: 0 success, 1 refused or a check failed, 2 usage, 3 input/output or \
            network failure.
            Details: docs/cli.md
            """,
        subcommands: [Inspect.self, Pack.self, Publish.self, Verify.self, Rollback.self, Promote.self, Rollout.self, Prune.self, History.self, Report.self, Resign.self, Keygen.self, Keys.self, SignModel.self, Serve.self]
    )
}

/// Runs the command line and exits with a documented status (`ExitStatus`).
@main
enum Main {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        // `--json` anywhere before `--`: a pipeline parses stdout, so errors come as JSON there too.
        let json = arguments.prefix { $0 != "--" }.contains("--json")
        // Only the top level has --version (handled here, not as a flag the parser would
        // also offer every subcommand): on publish and rollback, --version is the model's.
        if arguments == ["--version"] {
            print(ModelCastVersion.current)
            exit(ExitStatus.success.rawValue)
        }
        guard !arguments.isEmpty else {
            printError(ModelCast.helpMessage())
            printError("Error: no command given")
            exit(ExitStatus.usage.rawValue)
        }
        // A mistyped command gets the closest one, not a generic parse error.
        let commands = ModelCast.configuration.subcommands.map { $0._commandName } + ["help", "refresh"]
        if let first = arguments.first, !first.hasPrefix("-"), !commands.contains(first) {
            let message = "unknown command \(Spelling.quoted(first, among: commands)); the commands are \(commands.filter { $0 != "help" }.joined(separator: ", "))"
            printError("Error: " + message)
            if json { print(jsonErrorObject(status: .usage, message: message), terminator: "") }
            exit(ExitStatus.usage.rawValue)
        }
        // The command the line named, once parsed: an error its run throws shows its usage.
        var parsed: ParsableCommand.Type?
        do {
            var command = try ModelCast.parseAsRoot(arguments)
            parsed = type(of: command)
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(report(error, json: json, command: parsed).rawValue)
        }
    }

    /// Prints `error` (stderr; with `json`, also the error object on stdout) and returns the
    /// status. `command` is the command that was running (nil when the line did not parse).
    static func report(_ error: Error, json: Bool, command: ParsableCommand.Type?) -> ExitStatus {
        if let code = error as? ExitCode {
            // A command that already printed its result (verify's report) and only sets the status.
            return ExitStatus(rawValue: code.rawValue) ?? .refused
        }
        let parserCode = ModelCast.exitCode(for: error)
        if parserCode == .success {
            // --help: the parser's text is the result.
            print(ModelCast.fullMessage(for: error))
            return .success
        }
        let status: ExitStatus
        let message: String
        if parserCode == .validationFailure, let command {
            // A ValidationError from a command's run: its own usage line, not the top level's.
            status = .usage
            message = ModelCast.message(for: error)
            printError("Error: \(message)\n" + usageLines(command))
        } else if parserCode == .validationFailure {
            // The parser's own errors: it knows which command's usage to show.
            status = .usage
            message = ModelCast.message(for: error)
            printError(ModelCast.fullMessage(for: error))
        } else if ExitStatus(for: error) == .usage, let command {
            // A required setting missing from the command line (and the config file).
            status = .usage
            message = (error as? LocalizedError)?.errorDescription ?? ModelCast.message(for: error)
            printError("Error: \(message)\n" + usageLines(command))
        } else {
            status = ExitStatus(for: error)
            message = (error as? LocalizedError)?.errorDescription ?? ModelCast.message(for: error)
            printError("Error: " + message)
        }
        if json { print(jsonErrorObject(status: status, message: message), terminator: "") }
        return status
    }

    /// The usage line of `command` and where its help is, as the parser prints them.
    static func usageLines(_ command: ParsableCommand.Type) -> String {
        let usage = ModelCast.usageString(for: command)
        let name = usage.split(separator: " ").prefix { !$0.hasPrefix("[") && !$0.hasPrefix("<") && !$0.hasPrefix("-") }.joined(separator: " ")
        return "Usage: \(usage)\n  See '\(name) --help' for more information."
    }
}


import Foundation

/// The `--json` error object: `{"error": {"code": 1, "kind": "refused", "message": "…"}}`.
func jsonErrorObject(status: ExitStatus, message: String) -> String {
    JSONValue.object([
        .init("error", .object([
            .init("code", .int(Int64(status.rawValue))),
            .init("kind", .string(status.name)),
            .init("message", .string(message)),
        ])),
    ]).serialized()
}
