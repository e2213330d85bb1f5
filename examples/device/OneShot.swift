import Foundation
import ModelCastClient
import ModelCastFormat

/// The one-shot form: every setting on the command line, one update (or check, or revert)
/// per run, nothing recorded but the client's own state. Its exit statuses are the
/// protocol's (`ExitStatus`).
enum OneShot {
    static let usageText = """
        usage: modelcast-device --manifest URL --dir DIR [--device-id ID] [--public-key KEY]... [--model-signing-public-key FILE]
                 [--app-version V] [--keep N] [--check]
                 [--memory BYTES] [--platform P] [--os-version V] [--arch A] [--accelerator A]... [--capability C]...
                 [--policy essential|prefetch|on-demand] [--download-policy MODEL=POLICY]... [--request MODEL]... [--max-download BYTES]
               modelcast-device revert MODEL --reason TEXT --manifest URL --dir DIR
               modelcast-device init --dir D --manifest-url U [--public-key FILE]... [--model-signing-public-key FILE]
                 [--app-version V] [--device-id ID] [--device k=v,...]... [--min-rate BYTES] [--rate-window SECONDS]
                 [--deadline SECONDS] [--max-install BYTES]
               modelcast-device update --dir D [--policy essential|prefetch|on-demand] [--request MODEL]...
               modelcast-device state --dir D
               modelcast-device revert --dir D MODEL --reason TEXT

        """

    static func usage(_ message: String) -> Never {
        FileHandle.standardError.write(Data(("modelcast-device: " + escapedLine(message) + "\n" + usageText).utf8))
        exit(ExitStatus.usage.rawValue)
    }

    /// `8G`, `512M`, `1024K` (binary units) or a number of bytes.
    static func byteCount(_ text: String) -> Int64? {
        let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        if let last = text.last, let unit = units[Character(last.uppercased())] { return Int64(text.dropLast()).map { $0 * unit } }
        return Int64(text)
    }

    static func policy(_ text: String) -> DownloadPolicy {
        guard let policy = try? DownloadPolicy(parsing: text) else { usage("'\(text)' is not a download policy (essential, prefetch or on-demand)") }
        return policy
    }

    /// `running m 1.0.0 (variant small): models/m/current/m.bin`
    static func describe(_ model: InstalledModel) -> String {
        "running \(model.name) \(model.version)" + (model.variant.map { " (variant \($0))" } ?? "")
            + ": models/\(model.name)/current/\(model.mainFile.lastPathComponent)"
    }

    /// One line per model with variants (the one taken, or why none), per refused version.
    static func explain(_ plan: UpdatePlan) {
        for name in plan.variants.keys.sorted() {
            let choice = plan.variants[name]!
            let skipped = choice.skipped.map { "\($0.variant): \($0.reasons.joined(separator: ", "))" }.joined(separator: "; ")
            if let chosen = choice.chosen {
                print("\(name): variant \(chosen.variant?.rawValue ?? "?") \(chosen.version)" + (skipped.isEmpty ? "" : " (skipped \(skipped))"))
            } else {
                print("\(name): no variant for this device, left as it is (\(skipped))")
            }
        }
        for name in plan.refused.keys.sorted() {
            let refused = plan.refused[name]!
            print("\(name): \(refused.version) refused on this device (\(refused.reason)), left as it is")
        }
    }

    static func run(_ commandLine: [String]) async -> Never {
        var options: [String: [String]] = [:]
        var flags = Set<String>()
        var positional: [String] = []
        var arguments = commandLine
        while let argument = arguments.first {
            arguments.removeFirst()
            switch argument {
            case "--check", "--help": flags.insert(argument)
            case "--manifest", "--dir", "--device-id", "--public-key", "--app-version", "--keep", "--memory", "--platform", "--os-version", "--arch",
                 "--accelerator", "--capability", "--policy", "--download-policy", "--request", "--max-download", "--reason",
                 "--model-signing-public-key":
                guard let value = arguments.first else { usage("\(argument) needs a value") }
                arguments.removeFirst()
                options[argument, default: []].append(value)
            default:
                guard !argument.hasPrefix("-") else { usage("unknown argument '\(argument)'") }
                positional.append(argument)
            }
        }
        if flags.contains("--help") { usage("help") }
        guard let manifest = options["--manifest"]?.last.flatMap(URL.init(string:)) else { usage("--manifest URL is required") }
        guard let directory = options["--dir"]?.last else { usage("--dir DIR is required") }
        // A key is a `.pub` file or the key's text itself.
        var keys: [String] = []
        for value in options["--public-key"] ?? [] {
            guard FileManager.default.fileExists(atPath: value) else {
                keys.append(value)
                continue
            }
            do { keys.append(try String(contentsOfFile: value, encoding: .utf8)) } catch { usage("--public-key \(value): \(error.localizedDescription)") }
        }
        var modelSigningKey: ModelSigningPublicKey?
        if let path = options["--model-signing-public-key"]?.last {
            do { modelSigningKey = try ModelSigningPublicKey(pem: String(contentsOfFile: path, encoding: .utf8)) } catch {
                usage("--model-signing-public-key \(path): \(error)")
            }
        }
        var device = DeviceProfile.current
        if let memory = options["--memory"]?.last {
            guard let bytes = byteCount(memory) else { usage("--memory '\(memory)' is not a byte count (8G, 512M, 1048576)") }
            device.physicalMemory = bytes
        }
        if let name = options["--platform"]?.last {
            guard let platform = DevicePlatform(rawValue: name) else {
                usage("--platform '\(name)' is not one of \(DevicePlatform.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            device.platform = platform
        }
        if let os = options["--os-version"]?.last { device.osVersion = os }
        if let arch = options["--arch"]?.last { device.architecture = arch }
        if let names = options["--accelerator"] {
            device.accelerators = Set(names.map { name in
                guard let accelerator = Accelerator(rawValue: name) else { usage("--accelerator '\(name)' is not gpu or neural-engine") }
                return accelerator
            })
        }
        if let capabilities = options["--capability"] { device.capabilities = Set(capabilities) }
        var policies: [String: DownloadPolicy] = [:]
        for assignment in options["--download-policy"] ?? [] {
            let parts = assignment.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { usage("--download-policy '\(assignment)' is not MODEL=POLICY") }
            policies[parts[0]] = policy(parts[1])
        }
        var shouldDownload: (@Sendable (UpdatePlan) async -> Bool)?
        if let text = options["--max-download"]?.last {
            guard let limit = byteCount(text) else { usage("--max-download '\(text)' is not a byte count") }
            shouldDownload = { plan in plan.bytesToDownload <= limit }
        }
        let configuration = ClientConfiguration(
            manifestURL: manifest, directory: URL(fileURLWithPath: directory), deviceID: options["--device-id"]?.last ?? "device-0",
            publicKeys: keys, modelSigningPublicKey: modelSigningKey, appVersion: options["--app-version"]?.last,
            keepPreviousVersions: Int(options["--keep"]?.last ?? "1") ?? 1, device: device, downloadPolicies: policies,
            shouldDownload: shouldDownload)

        let updater: ModelUpdater
        do { updater = try ModelUpdater(configuration) } catch { fail(error) }
        if positional.first == "revert" {
            guard positional.count == 2 else { usage("revert takes one MODEL") }
            guard let reason = options["--reason"]?.last else { usage("revert needs --reason TEXT") }
            do {
                let model = try await updater.reportUnusable(model: positional[1], reason: reason)
                print("reverted \(model.name) to \(model.version)" + (model.variant.map { " (variant \($0))" } ?? "") + "; the version it ran is refused")
                exit(ExitStatus.success.rawValue)
            } catch {
                fail(error)
            }
        }
        guard positional.isEmpty else { usage("unknown argument '\(positional[0])'") }
        let progress = Task {
            var lastPercent = -1
            for await step in updater.progress where step.totalBytes > 0 {
                let percent = Int(step.completedBytes * 100 / step.totalBytes)
                if percent / 25 != lastPercent / 25 {
                    FileHandle.standardError.write(Data("downloading \(step.file) \(percent)%\n".utf8))
                    lastPercent = percent
                }
            }
        }
        let scope: DownloadPolicy = options["--policy"]?.last.map(policy) ?? .onDemand
        do {
            if flags.contains("--check") {
                if let plan = try await updater.check(scope) {
                    print("sequence \(plan.sequence): " + plan.versions.keys.sorted().map { "\($0) \(plan.versions[$0]!)" }.joined(separator: ", ")
                          + (plan.takesCandidate ? "" : " (the rollout's fallback)") + ", \(plan.bytesToDownload) bytes to download")
                    explain(plan)
                } else {
                    print("not modified")
                }
                exit(ExitStatus.success.rawValue)
            }
            if let requested = options["--request"] {
                for name in requested { print("requested " + describe(try await updater.request(name))) }
            } else {
                switch try await updater.update(scope) {
                case .notModified: print("not modified")
                case .upToDate(let sequence): print("up to date (sequence \(sequence))")
                case .updated(let sequence, let models):
                    print("updated to sequence \(sequence): " + models.keys.sorted().map { "\($0) \(models[$0]!)" }.joined(separator: ", "))
                case .deferred(let plan):
                    print("deferred: \(plan.bytesToDownload) bytes to download, more than --max-download")
                    explain(plan)
                }
            }
            // A file built from the installed version's segments: what it cost.
            for file in await updater.lastDownloads {
                guard let seed = file.seededFrom, let requests = file.rangeRequests else { continue }
                let share = file.size > 0 ? String(format: "%.2f", Double(file.fetchedBytes) * 100 / Double(file.size)) : "0.00"
                print("fetched \(file.fetchedBytes) of \(file.size) bytes of \(file.file) (\(share) %) in \(requests) range request\(requests == 1 ? "" : "s"); the rest copied from \(seed)")
            }
        } catch {
            fail(error)
        }
        progress.cancel()
        let state = URL(fileURLWithPath: directory).appendingPathComponent("models")
        for name in ((try? FileManager.default.contentsOfDirectory(atPath: state.path)) ?? []).sorted() {
            // The path an app opens: through the `current` link, which an update swaps in one rename.
            if let model = updater.installed(name) { print(describe(model)) }
        }
        exit(ExitStatus.success.rawValue)
    }
}
