import ArgumentParser
import Foundation
import ModelCastCore

extension ModelCast {
    struct Rollout: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a staged rollout (--percent, --halt, --complete), or simulate who gets what.",
            discussion: """
                A staged rollout (publish or promote with --rollout 10% or --rollout-schedule) puts a \
                rollout block in the signed modelcast manifest: the manifest's models are the \
                candidate, its rollback section the fallback, and each device decides for itself, \
                so static hosting is enough:

                  h       = SHA-256(salt + ":" + device_id)
                  bucket  = (first 8 bytes of h, big-endian) mod 10000
                  percent = with a schedule: the percent of its last step whose
                            time has come (0 before the first); else the percent
                  the device runs the candidate when bucket < percent x 100

                `modelcast rollout TARGET --percent 50` raises it (a new sequence; the salt stays, so \
                every device already in the cohort stays in it); --halt sets 0% (every device on the \
                fallback, including those that took the candidate); --complete makes the candidate the \
                plain release. Each is signed when the live manifest is (give --sign), and refused \
                when no rollout is in progress.
                `modelcast rollout simulate SOURCE` evaluates the rule over synthetic device ids.
                """,
            subcommands: [Change.self, Simulate.self],
            defaultSubcommand: Change.self
        )
    }
}

extension ModelCast.Rollout {
    struct Change: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Raise, halt or complete the staged rollout in progress (the default: `modelcast rollout TARGET --percent 50`)."
        )

        @OptionGroup
        var targetOptions: PublishedTargetOptions

        @Option(help: ArgumentHelp("The new share of devices on the candidate (50%, 0.5%); replaces a schedule.", valueName: "PERCENT"))
        var percent: String?

        @Flag(help: "Stop the rollout: 0%, every device on the fallback.")
        var halt = false

        @Flag(help: "Finish it: the candidate becomes the plain release for every device.")
        var complete = false

        @OptionGroup
        var goLive: GoLiveOptions

        func validate() throws {
            let given = [percent != nil, halt, complete].filter { $0 }.count
            guard given == 1 else {
                throw ValidationError(given == 0 ? "give one of --percent PERCENT, --halt or --complete" : "give only one of --percent, --halt and --complete")
            }
            // Not a number at all is a parse error; a number the rules refuse (above 100) is not.
            if let percent, Double(percent.hasSuffix("%") ? String(percent.dropLast()) : percent) == nil {
                throw ValidationError("--percent '\(percent)' is not a number (e.g. 50%, 0.5%)")
            }
        }

        func run() async throws {
            Interrupts.shared.setMessage(InterruptMessage.goLive)
            let changes: [RolloutChangeRequest.Change] = (try percent.map { [.percent(try ModelCastCore.Rollout.parsePercent($0))] } ?? [])
                + (halt ? [.halt] : []) + (complete ? [.complete] : [])
            let environment = ProcessInfo.processInfo.environment
            let request = RolloutChangeRequest(
                change: changes[0], manifestKey: targetOptions.manifestKey, goLive: try goLive.value(environment: environment, templates: targetOptions.templates))
            let report = try await withStorage(targetOptions.settings(environment: environment), environment: environment) { storage in
                try await goLive.publisher(storage, manifestKey: request.manifestKey).changeRollout(request)
            }
            let done = switch changes[0] {
            case .percent(let share): "rollout set to \(ModelCastCore.Rollout.percentText(share))%"
            case .halt: "rollout halted"
            case .complete: "rollout completed"
            }
            try printPublishReport(report, json: targetOptions.json, done: "\(done): published", wouldDo: "would publish")
        }
    }

    struct Simulate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Evaluate a manifest's rollout rule over synthetic device ids: the share of devices on each release.",
            discussion: """
                SOURCE is a published directory or s3://bucket/prefix (its --channel's manifest), a \
                manifest file, or a manifest URL. The ids are device-0, device-1, …; the rule is the \
                one `modelcast rollout --help` shows, the same code a client library runs. --at \
                evaluates a schedule at another time (RFC 3339, or +24h / +7d from now).
                """
        )

        @Argument(help: ArgumentHelp("A published directory, s3://bucket/prefix, a manifest file or a manifest URL.", valueName: "SOURCE"))
        var source: String

        @Option(help: "How many synthetic devices.")
        var devices = 100_000

        @Option(help: ArgumentHelp("When to evaluate the rule: an RFC 3339 time, or +DURATION from now (+24h, +7d). Default: now.", valueName: "TIME"))
        var at: String?

        @Option(help: ArgumentHelp("For a directory or s3:// target: the channel.", valueName: "NAME"))
        var channel = Channels.stable

        @Option(help: "For a directory or s3:// target: the key of its manifest.")
        var manifestKey = "manifest.json"

        @Option(help: ArgumentHelp("Say which variant and version of each model one device takes instead: memory=8GiB,platform=ios,os=17.4,arch=arm64,accelerators=neural-engine+gpu,capabilities=NAME+NAME (every field optional; an unknown one fails any requirement on it).", valueName: "DESCRIPTION"))
        var device: String?

        @Option(help: ArgumentHelp("With --device during a rollout: the device's id, to say which side of the rollout it is on.", valueName: "ID"))
        var deviceId: String?

        @Flag(help: "Print JSON instead of text.")
        var json = false

        @OptionGroup(title: "S3 sources")
        var s3: S3ConnectionOptions

        func run() async throws {
            guard (1...10_000_000).contains(devices) else { throw ValidationError("--devices must be between 1 and 10000000, got \(devices)") }
            let now: Date
            if let at {
                if at.hasPrefix("+") { now = Date().addingTimeInterval(try parseDuration(String(at.dropFirst()))) }
                else if let date = parseTimestamp(at) { now = date }
                else { throw ValidationError("--at '\(at)' is neither an RFC 3339 time (2026-12-01T00:00:00Z) nor +DURATION (+24h)") }
            } else {
                now = Date()
            }
            try Channels.validate(channel)
            let data = try await manifestBytes()
            let release = try Release.decode(data, source: source)
            if let device {
                let simulation = try DeviceSimulation(release: release, device: try DeviceProfile(describing: device), deviceID: deviceId, at: now)
                print(json ? try JSONOutput.encode(simulation) : simulation.text, terminator: "")
                return
            }
            if deviceId != nil { throw ValidationError("--device-id goes with --device") }
            guard release.rollout != nil else {
                throw ModelCastError.usage("\(source) has no staged rollout: sequence \(release.sequence) goes to every device")
            }
            let simulation = RolloutSimulation(release: release, devices: devices, at: now)
            print(json ? try JSONOutput.encode(simulation) : simulation.text, terminator: "")
        }

        /// The manifest's bytes, without its inline signature.
        private func manifestBytes() async throws -> Data {
            let data: Data
            let kind = TargetKind(of: source)
            if kind == .served {
                data = try await downloadSmallObject(source)
            } else if kind == .bucket || FileManager.default.isDirectory(source) {
                let key = Channels.manifestKey(channel: channel, base: manifestKey)
                let environment = ProcessInfo.processInfo.environment
                let found = try await withStorage(s3.settings(for: source), environment: environment) { try await $0.get(key, limit: TargetLayout.recordLimit) }
                guard let found else { throw ModelCastError.notFound(path: "\(source)/\(key)") }
                data = found
            } else {
                guard let found = FileManager.default.contents(atPath: source) else { throw ModelCastError.notFound(path: source) }
                data = found
            }
            return InlineSignature.strip(data)
        }
    }
}

extension FileManager {
    fileprivate func isDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }
}
