import ArgumentParser
import Foundation
import ModelCastCore

extension ModelCast {
    struct History: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the releases a target has published, and which went live (what rollback can return to).",
            discussion: """
                STATE is `live` (the manifest devices fetch now), `went live` (a rollback target), \
                `never live` (its publish stopped before the manifest was written) or `pending` \
                (newer than the live manifest: a publish under way, or one that failed last).

                history reads every record (eight at a time), so its cost grows with the history; \
                publish, rollback, resign and verify read the history index (_modelcast/history-index.json) \
                instead. history says when the index does not name exactly the records that are \
                there; --rebuild-index rewrites it from them (commands that find it wrong read \
                every record and write a new one by themselves).
                """
        )

        @OptionGroup
        var targetOptions: PublishedTargetOptions

        @Flag(help: "Rewrite the history index (_modelcast/history-index.json) from the records that are there.")
        var rebuildIndex = false

        func run() async throws {
            let environment = ProcessInfo.processInfo.environment
            let manifestKey = targetOptions.manifestKey
            let entries = try await withStorage(targetOptions.settings(environment: environment), environment: environment) { storage in
                if rebuildIndex {
                    let state = try await Publisher(storage: storage, log: { printError($0) }).rebuildIndex(manifestKey: manifestKey)
                    let was = state.index.problem.map { "it was not usable: \($0)" } ?? "it was already current"
                    printError("rewrote \(storage.location)/\(TargetLayout.indexKey(manifestKey: manifestKey)) from \(state.history.count) record\(state.history.count == 1 ? "" : "s") (\(was))")
                    return state.entries
                }
                let state = try await TargetState.load(from: storage, manifestKey: manifestKey, reading: .all)
                if let problem = state.index.problem, !state.history.isEmpty {
                    printError("note: \(problem); publish, rollback and resign rewrite it, or run: modelcast history \(storage.location) --rebuild-index")
                }
                guard !state.history.isEmpty else {
                    throw ModelCastError.targetState("no release history at \(storage.location)/\(TargetLayout.historyPrefix(manifestKey: manifestKey)): \(state.manifestData == nil ? "nothing is published there" : "its manifest was not published by modelcast")")
                }
                return state.entries
            }
            if targetOptions.json {
                print(try JSONOutput.encode(entries), terminator: "")
                return
            }
            print("SEQUENCE  PUBLISHED             STATE       MODELS")
            for entry in entries {
                let models = entry.versions.keys.sorted().map { "\($0) \(entry.versions[$0]!)" }.joined(separator: ", ")
                let sequence = String(entry.sequence)
                print(String(repeating: " ", count: max(0, 8 - sequence.count)) + sequence + "  "
                      + entry.publishedAt.padding(toLength: 20, withPad: " ", startingAt: 0) + "  "
                      + entry.state.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0) + "  " + models)
            }
        }
    }
}
