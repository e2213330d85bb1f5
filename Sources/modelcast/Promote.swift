import ArgumentParser
import Foundation
import ModelCastCore

extension ModelCast {
    struct Promote: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make one channel serve another channel's live release: same keys, same bytes, no upload.",
            discussion: """
                `modelcast promote TARGET --from beta --to stable` publishes channel beta's live \
                release as channel stable's next record: the same models, keys and SHA-256, every \
                object proven in the store first (hashed, or the store's own checksum). The \
                destination keeps its own sequence and version rules: a model may not go below its \
                live version there (that is a rollback), and its live release becomes the fallback \
                (the manifest's rollback section). --model promotes one model; the destination's \
                others stay. With --rollout or --rollout-schedule the promotion is a staged rollout \
                on the destination. A source channel in a rollout is refused: complete it first.
                """
        )

        @Argument(help: ArgumentHelp("Target: a published directory or s3://bucket/prefix (or $MODELCAST_TARGET).", valueName: "TARGET"))
        var target: String?

        @Option(help: ArgumentHelp("The channel whose live release is promoted.", valueName: "NAME"))
        var from: String

        @Option(help: ArgumentHelp("The channel that serves it next.", valueName: "NAME"))
        var to = Channels.stable

        @Option(help: "Promote only this model; the destination's other models stay.")
        var model: String?

        @Option(help: "Key of the target's manifest (the channels' keys derive from it).")
        var manifestKey = "manifest.json"

        @Option(help: ArgumentHelp("Directory of *.mustache files overriding the built-in templates.", valueName: "DIR"))
        var templates: String?

        @OptionGroup(title: "Staged rollout (modelcast profile)")
        var rolloutOptions: RolloutStartOptions

        @Flag(help: SafetyHelp.adoptLive)
        var adoptLive = false

        @OptionGroup
        var goLive: GoLiveOptions

        @Flag(help: "Print a JSON summary instead of text.")
        var json = false

        @OptionGroup(title: "S3 targets")
        var s3: S3ConnectionOptions

        func run() async throws {
            Interrupts.shared.setMessage(InterruptMessage.goLive)
            let environment = ProcessInfo.processInfo.environment
            guard let target = target ?? environment["MODELCAST_TARGET"] else {
                throw ValidationError("give the TARGET (a directory or s3://bucket/prefix) or set MODELCAST_TARGET")
            }
            let (rolloutPercent, rolloutSchedule) = try rolloutOptions.parsed()
            let request = PromoteRequest(
                from: from, to: to, model: model, baseManifestKey: manifestKey,
                goLive: try goLive.value(environment: environment, templates: templates, adoptLive: adoptLive),
                rolloutPercent: rolloutPercent, rolloutSchedule: rolloutSchedule)
            let report = try await withStorage(s3.settings(for: target), environment: environment) { storage in
                try await goLive.publisher(storage, manifestKey: request.manifestKey).promote(request)
            }
            try printPublishReport(report, json: json, done: "promoted \(from) to \(to): published", wouldDo: "would promote \(from) to \(to) as")
        }
    }
}
