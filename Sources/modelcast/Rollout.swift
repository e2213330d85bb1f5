import ArgumentParser
import Foundation
import ModelCastCore

extension ModelCast {
    struct Rollout: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a staged rollout (--percent, --halt, --complete), or simulate who gets what.",
            discussion: """
                A staged rollout (publish or promote --rollout 10%) names a candidate and a \
                fallback; each device picks one by a salted hash of its id. `modelcast rollout \
                TARGET --percent 50` raises it, --halt stops it, --complete finishes it.
                Details: docs/cli.md#rollout
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
            abstract: "Raise, halt or complete the staged rollout in progress (the default: `modelcast rollout TARGET --percent 50`).",
            discussion: """
                Each change is a new sequence, signed when the live manifest is (give --sign).
                More options: modelcast rollout set --help-hidden
                Details: docs/cli.md#rollout-set
                """
        )

        @OptionGroup(title: "Change")
        var change: RolloutChangeOptions

        @OptionGroup
        var goLive: GoLiveOptions

        @OptionGroup
        var targetOptions: PublishedTargetOptions

        func run() async throws {
            Interrupts.shared.setMessage(InterruptMessage.goLive)
            let changes: [RolloutChangeRequest.Change] = (try change.percent.map { [.percent(try ModelCastCore.Rollout.parsePercent($0))] } ?? [])
                + (change.halt ? [.halt] : []) + (change.complete ? [.complete] : [])
            let environment = ProcessInfo.processInfo.environment
            let request = RolloutChangeRequest(
                change: changes[0], manifestKey: targetOptions.manifestKey, goLive: try goLive.value(environment: environment, templates: targetOptions.templates))
            let report = try await withStorage(targetOptions.settings(environment: environment), environment: environment) { storage in
                try await RolloutChanger(writer: goLive.writer(storage, manifestKey: request.manifestKey)).changeRollout(request)
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
                The ids are device-0, device-1, …; the rule is the one a client library runs. \
                With --device, it says which variant and version one device takes.
                More options: modelcast rollout simulate --help-hidden
                Details: docs/cli.md#rollout-simulate
                """
        )

        @Argument(help: ArgumentHelp("A published directory, s3://bucket/prefix, a manifest file or a manifest URL.", valueName: "SOURCE"))
        var source: String

        @Option(help: "How many synthetic devices.")
        var devices = 100_000

        @Option(help: ArgumentHelp("When to evaluate the rule: an RFC 3339 time or +DURATION (+24h; default: now).", valueName: "TIME"))
        var at: String?

        @Option(help: ArgumentHelp("For a directory or s3:// target: the channel.", valueName: "NAME"))
        var channel = Channels.stable

        @Option(help: ArgumentHelp("For a directory or s3:// target: the key of its manifest.", visibility: .hidden))
        var manifestKey = "manifest.json"

        // Every field is optional; an unknown one fails any requirement on it (docs/cli.md#rollout-simulate).
        @Option(help: ArgumentHelp("Say what one device takes instead, e.g. memory=8GiB,platform=ios,os=17.4.", valueName: "DESCRIPTION"))
        var device: String?

        @Option(help: ArgumentHelp("With --device during a rollout: the device's id, to say which side of the rollout it is on.", valueName: "ID"))
        var deviceId: String?

        @Flag(help: "Print JSON instead of text.")
        var json = false

        @OptionGroup(title: "S3 sources")
        var s3: S3ConnectionOptions

        func run() async throws {
            guard (1...10_000_000).contains(devices) else { throw ValidationError("--devices must be between 1 and 10000000, got \(devices)") }
            let now = try moment(at)
            try Channels.validate(channel)
            let data = try await manifestBytes()
            let release = try Release.decode(data, source: source)
            if let device {
                let simulation = try DeviceSimulation(release: release, device: try DeviceProfile(describing: device), deviceID: deviceId, at: now)
                let output = SimulationWithPolicies(simulation, release: release)
                print(json ? try JSONOutput.encode(output) : simulation.text + output.text, terminator: "")
                return
            }
            if deviceId != nil { throw ValidationError("--device-id goes with --device") }
            guard release.rollout != nil else {
                throw ModelCastError.usage("\(source) has no staged rollout: sequence \(release.sequence) goes to every device")
            }
            let simulation = RolloutSimulation(release: release, devices: devices, at: now)
            let output = SimulationWithPolicies(simulation, release: release)
            print(json ? try JSONOutput.encode(output) : simulation.text + output.text, terminator: "")
        }

        /// The manifest's bytes, without its inline signature.
        private func manifestBytes() async throws -> Data {
            let key = Channels.manifestKey(channel: channel, base: manifestKey)
            let data = try await withSource(try ReadSource(source), settings: s3.settings(for: source), environment: ProcessInfo.processInfo.environment,
                                            log: { printError($0) }) { try await $0.manifest(key: key) }
            return InlineSignature.strip(data)
        }
    }
}

/// `rollout set`'s change: exactly one of a new share, a halt or completion.
struct RolloutChangeOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The new share of devices on the candidate (50%, 0.5%); replaces a schedule.", valueName: "PERCENT"))
    var percent: String?

    @Flag(help: "Stop the rollout: 0%, every device on the fallback.")
    var halt = false

    @Flag(help: "Finish it: the candidate becomes the plain release for every device.")
    var complete = false

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
}
