import ArgumentParser
import Foundation
import ModelCastCore

extension ModelCast {
    struct History: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the releases a target has published, and which went live (what rollback can return to).",
            discussion: """
                STATE is live, went live (a rollback target), never live or pending (a publish \
                under way, or one that failed last).
                More options: modelcast history --help-hidden
                Details: docs/cli.md#history
                """
        )

        @OptionGroup
        var targetOptions: PublishedTargetOptions

        @Flag(help: "Rewrite the history index from the records there.")
        var rebuildIndex = false

        /// The other channels' records, which name promotions (what a release was promoted
        /// from). Read after the channel's own state, whose failures say most (a store that
        /// cannot be read, by name); a store that cannot be listed fails the command, another
        /// channel that cannot be read only loses what its promotions say.
        func otherChannels(_ storage: any Storage) async throws -> [String: [Release]] {
            var others: [String: [Release]] = [:]
            for name in try await Channels.list(storage, base: targetOptions.baseManifestKey) where name != targetOptions.channel {
                let key = Channels.manifestKey(channel: name, base: targetOptions.baseManifestKey)
                do {
                    others[name] = try await TargetState.load(from: storage, manifestKey: key).history
                } catch {
                    printError("warning: channel \(name) (\(storage.location)/\(key)) could not be read (\(error)): a release promoted from it shows as published")
                }
            }
            return others
        }

        func run() async throws {
            let environment = ProcessInfo.processInfo.environment
            let manifestKey = targetOptions.manifestKey
            let channel = targetOptions.channel
            let (location, entries) = try await withStorage(targetOptions.settings(environment: environment), environment: environment) { storage in
                let state: TargetState
                if rebuildIndex {
                    state = try await IndexRebuilder(storage: storage, log: { printError($0) }).rebuildIndex(manifestKey: manifestKey)
                    let was = state.index.problem.map { "it was not usable: \($0)" } ?? "it was already current"
                    printError("rewrote \(storage.location)/\(TargetLayout.indexKey(manifestKey: manifestKey)) from \(state.history.count) record\(state.history.count == 1 ? "" : "s") (\(was))")
                } else {
                    state = try await TargetState.load(from: storage, manifestKey: manifestKey, reading: .all)
                    if let problem = state.index.problem, !state.history.isEmpty {
                        printError("note: \(problem); publish, rollback and resign rewrite it, or run: modelcast history \(storage.location) --rebuild-index")
                    }
                    guard !state.history.isEmpty else {
                        throw ModelCastError.targetState("no release history at \(storage.location)/\(TargetLayout.historyPrefix(manifestKey: manifestKey)): \(state.manifestData == nil ? "nothing is published there" : "its manifest was not published by modelcast")")
                    }
                }
                return (storage.location, state.entries(otherChannels: try await otherChannels(storage)))
            }
            if targetOptions.json {
                print(try JSONOutput.encode(HistoryReport(target: location, channel: channel, manifestKey: manifestKey, releases: entries)), terminator: "")
                return
            }
            print("channel \(channel): \(location)/\(manifestKey)")
            let models = entries.map { entry in entry.versions.keys.sorted().map { "\($0) \(entry.versions[$0]!)" }.joined(separator: ", ") }
            let width = max(6, models.map(\.count).max() ?? 0)
            print("SEQUENCE  PUBLISHED             STATE       " + "MODELS".padding(toLength: width, withPad: " ", startingAt: 0) + "  WHAT")
            for (entry, models) in zip(entries, models) {
                let sequence = String(entry.sequence)
                print(String(repeating: " ", count: max(0, 8 - sequence.count)) + sequence + "  "
                      + entry.publishedAt.padding(toLength: 20, withPad: " ", startingAt: 0) + "  "
                      + entry.state.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0) + "  "
                      + models.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + (entry.detail ?? ""))
                // Gates devices apply before downloading (storage is in --json: every modelcast release has it).
                for (name, facts) in (entry.policies ?? [:]).sorted(by: { $0.key < $1.key }) where facts.gates {
                    let parts = [facts.licence.map(ModelPolicyText.licence), facts.downloadConditions.flatMap(ModelPolicyText.conditions)].compactMap { $0 }
                    print(String(repeating: " ", count: 10) + "\(name): " + parts.joined(separator: "; "))
                }
            }
        }
    }
}
