import Foundation
import ModelCastClient
import ModelCastFormat

extension ProtocolCall {
    /// `update --dir D [--policy P] [--request MODEL]… [--accept-licence MODEL]…
    /// [--network unmetered|cellular] [--charging yes|no] [--in-use MODEL]…`: one update of
    /// the models `--policy` covers (default on-demand: every model), then each `--request`ed
    /// model installed whatever its policy. With `--request` and no `--policy`, only the
    /// requested models are installed (the app asked for them; the others wait for their own
    /// update).
    ///
    /// First, what an app does before it updates: `--accept-licence` records the user's
    /// acceptance of the licence the manifest names now for MODEL (the manifest is checked
    /// for it); `--network` and `--charging` report the device's conditions (not given: not
    /// reported, so a model that needs them waits); `--in-use` marks a model in use (never
    /// evicted by the storage budget; its last use is recorded). Each model left waiting is
    /// named on stderr, `waiting: MODEL: REASON`; the update still exits 0.
    static func update(_ words: ArraySlice<String>) async throws {
        let arguments = try ProtocolArguments(words, single: ["--dir", "--policy", "--network", "--charging"],
                                              repeatable: ["--request", "--accept-licence", "--in-use"])
        try arguments.expectPositional(0, "")
        let directory = try arguments.required("--dir", "D")
        let policy = try arguments.value("--policy").map { text in
            do { return try DownloadPolicy(parsing: text) } catch {
                throw UsageError("--policy \(quotedValue(text)) is not essential, prefetch or on-demand")
            }
        }
        func names(_ option: String) throws -> [String] {
            try arguments.values(option).map { name in
                guard (try? ModelName(name)) != nil else { throw UsageError("\(option) \(quotedValue(name)) is not a model name") }
                return name
            }
        }
        let requests = try names("--request"), accepted = try names("--accept-licence"), inUse = try names("--in-use")
        let network = try arguments.value("--network").map { text in
            guard let network = NetworkClass(rawValue: text) else { throw UsageError("--network \(quotedValue(text)) is not unmetered or cellular") }
            return network
        }
        let charging = try arguments.value("--charging").map { text -> Bool in
            switch text {
            case "yes": return true
            case "no": return false
            default: throw UsageError("--charging \(quotedValue(text)) is not yes or no")
            }
        }
        let updater = try updater(directory: directory)
        await updater.setConditions(DeviceConditions(network: network, charging: charging))
        for name in inUse { await updater.beginUse(name) }
        if !accepted.isEmpty { try await acceptLicences(accepted, updater: updater) }
        if policy != nil || requests.isEmpty {
            let outcome = try await updater.update(policy ?? .onDemand)
            await reportWaiting(updater)
            switch outcome {
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
            await reportWaiting(updater)
            print("requested \(model.name) \(model.version)" + (model.variant.map { " (variant \($0))" } ?? ""))
        }
    }

    /// Accepts, for each of `models`, the licence the manifest names for it now, as an app
    /// does once the user has read it. A model whose licence asks nothing is left as it is.
    private static func acceptLicences(_ models: [String], updater: ModelUpdater) async throws {
        guard let plan = try await updater.check() else { return }
        for name in models {
            guard case .licence(let spdx, let url)? = plan.waiting[name] else { continue }
            let terms = try LicenceTerms(spdx: spdx, url: url)
            try await updater.acceptLicence(model: name, licence: terms)
            FileHandle.standardError.write(Data(("accepted: " + escapedLine("\(name): licence \(terms)") + "\n").utf8))
        }
    }

    /// `waiting: MODEL: REASON` on stderr for each model the last call left waiting.
    private static func reportWaiting(_ updater: ModelUpdater) async {
        guard let waiting = await updater.lastPlan?.waiting else { return }
        for name in waiting.keys.sorted() {
            FileHandle.standardError.write(Data(("waiting: " + escapedLine(name + ": " + waiting[name]!.description) + "\n").utf8))
        }
    }
}
