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
                """
        )

        @OptionGroup
        var targetOptions: PublishedTargetOptions

        func run() async throws {
            let environment = ProcessInfo.processInfo.environment
            let manifestKey = targetOptions.manifestKey
            let entries = try await withStorage(targetOptions.settings(environment: environment), environment: environment) { storage in
                let state = try await TargetState.load(from: storage, manifestKey: manifestKey)
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
