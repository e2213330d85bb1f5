import Foundation
import ModelCastClient
import ModelCastFormat

extension ProtocolCall {
    /// `update --dir D [--policy P] [--request MODEL]…`: one update of the models `--policy`
    /// covers (default on-demand: every model), then each `--request`ed model installed
    /// whatever its policy. With `--request` and no `--policy`, only the requested models are
    /// installed (the app asked for them; the others wait for their own update).
    static func update(_ words: ArraySlice<String>) async throws {
        let arguments = try ProtocolArguments(words, single: ["--dir", "--policy"], repeatable: ["--request"])
        try arguments.expectPositional(0, "")
        let directory = try arguments.required("--dir", "D")
        let policy = try arguments.value("--policy").map { text in
            do { return try DownloadPolicy(parsing: text) } catch {
                throw UsageError("--policy \(quotedValue(text)) is not essential, prefetch or on-demand")
            }
        }
        let requests = try arguments.values("--request").map { name in
            guard (try? ModelName(name)) != nil else { throw UsageError("--request \(quotedValue(name)) is not a model name") }
            return name
        }
        let updater = try updater(directory: directory)
        if policy != nil || requests.isEmpty {
            switch try await updater.update(policy ?? .onDemand) {
            case .notModified: print("not modified")
            case .upToDate(let sequence): print("up to date (sequence \(sequence))")
            case .updated(let sequence, let models):
                print("updated to sequence \(sequence): " + models.keys.sorted().map { "\($0) \(models[$0]!)" }.joined(separator: ", "))
            case .deferred(let plan):
                // No `shouldDownload` is configured, so the library never defers; said in case it does.
                print("deferred: \(plan.bytesToDownload) bytes to download")
            }
        }
        for name in requests {
            let model = try await updater.request(name)
            print("requested \(model.name) \(model.version)" + (model.variant.map { " (variant \($0))" } ?? ""))
        }
    }
}
