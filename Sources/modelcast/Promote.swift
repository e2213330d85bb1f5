import ArgumentParser
import Foundation
import ModelCastCore

extension ModelCast {
    struct Promote: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make one channel serve another channel's live release: same keys, same bytes, no upload.",
            discussion: """
                The destination keeps its own sequence and version rules, and its live release \
                becomes the fallback. A source channel in a staged rollout is refused.
                More options: modelcast promote --help-hidden
                Details: docs/cli.md#promote
                """
        )

        @Argument(help: ArgumentHelp("Target: a published directory or s3://bucket/prefix (or $MODELCAST_TARGET).", valueName: "TARGET"))
        var target: String?

        @OptionGroup(title: "Channels")
        var channels: PromoteChannelOptions

        @OptionGroup(title: "Staged rollout")
        var rolloutOptions: RolloutStartOptions

        @OptionGroup
        var goLive: GoLiveOptions

        @OptionGroup(title: "S3 targets")
        var s3: S3ConnectionOptions

        @Option(help: ArgumentHelp("Key of the target's manifest (the channels' keys derive from it).", visibility: .hidden))
        var manifestKey = "manifest.json"

        @Option(help: ArgumentHelp("Directory of *.mustache files overriding the built-in templates.", valueName: "DIR", visibility: .hidden))
        var templates: String?

        @Flag(help: SafetyHelp.adoptLive)
        var adoptLive = false

        @Flag(help: "Print a JSON summary instead of text.")
        var json = false

        func run() async throws {
            Interrupts.shared.setMessage(InterruptMessage.goLive)
            let environment = ProcessInfo.processInfo.environment
            guard let target = target ?? environment["MODELCAST_TARGET"] else {
                throw ValidationError("give the TARGET (a directory or s3://bucket/prefix) or set MODELCAST_TARGET")
            }
            let (rolloutPercent, rolloutSchedule) = try rolloutOptions.parsed()
            let request = PromoteRequest(
                from: channels.from, to: channels.to, model: channels.model, baseManifestKey: manifestKey,
                goLive: try goLive.value(environment: environment, templates: templates, adoptLive: adoptLive),
                rolloutPercent: rolloutPercent, rolloutSchedule: rolloutSchedule)
            let report = try await withStorage(s3.settings(for: target), environment: environment) { storage in
                try await Promoter(writer: goLive.writer(storage, manifestKey: request.manifestKey)).promote(request)
            }
            try printPublishReport(report, json: json, done: "promoted \(channels.from) to \(channels.to): published", wouldDo: "would promote \(channels.from) to \(channels.to) as")
        }
    }
}

/// promote's channels: the one whose live release is promoted, and the one that serves it next.
struct PromoteChannelOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The channel whose live release is promoted.", valueName: "NAME"))
    var from: String

    @Option(help: ArgumentHelp("The channel that serves it next.", valueName: "NAME"))
    var to = Channels.stable

    @Option(help: "Promote only this model; the destination's other models stay.")
    var model: String?
}
