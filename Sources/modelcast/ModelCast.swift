import ArgumentParser
import ModelCastCore

@main
struct ModelCast: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "modelcast",
        abstract: "Publish on-device ML models for over-the-air delivery from static hosting.",
        discussion: """
            modelcast packs a model (GGUF, Core ML, TFLite, ONNX or any file or directory), \
            hashes it, and publishes it with a manifest that apps fetch to update their models.
            Results go to standard output; progress and logs go to standard error.
            """,
        version: ModelCastVersion.current,
        subcommands: [Inspect.self, Pack.self, Publish.self, Verify.self, Rollback.self, Prune.self, History.self, Resign.self, Keygen.self, Serve.self]
    )
}

/// Writes one line to standard error (logs and warnings, never results).
func printError(_ text: String) {
    var stream = StandardError()
    print(text, to: &stream)
}

struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        FileHandle.standardError.write(Data(string.utf8))
    }
}

import Foundation
