import Foundation
import ModelCastClient
import ModelCastFormat

extension ProtocolCall {
    /// `revert --dir D MODEL --reason TEXT`: back to MODEL's previous kept version, offline,
    /// refusing the version it ran (`ModelUpdater.reportUnusable`). Exit 1 when no version
    /// is kept to go back to, or MODEL is not installed.
    static func revert(_ words: ArraySlice<String>) async throws {
        let arguments = try ProtocolArguments(words, single: ["--dir", "--reason"])
        try arguments.expectPositional(1, "MODEL")
        let directory = try arguments.required("--dir", "D")
        let name = arguments.positional[0]
        guard (try? ModelName(name)) != nil else { throw UsageError("\(quotedValue(name)) is not a model name") }
        let reason = try arguments.required("--reason", "TEXT")
        let model = try await updater(directory: directory).reportUnusable(model: name, reason: reason)
        print("reverted \(model.name) to \(model.version)" + (model.variant.map { " (variant \($0))" } ?? "") + "; the version it ran is refused")
    }
}
