import ArgumentParser
import Foundation
import ModelCastCore

extension ModelCast {
    struct Resign: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Re-sign the live manifest with a new expiry and the next sequence; no artifact changes.",
            discussion: """
                Run it on a schedule (well before the expiry) so a signed, expiring manifest never \
                lapses: devices that refuse an expired manifest are then safe from a freeze attack \
                (an attacker replaying an old, validly signed manifest), and the sequence keeps \
                moving. The live release is published again through the usual path: a new history \
                record, the signature, the manifest last. Without --expires-in the live manifest's \
                validity period is kept.
                """,
            aliases: ["refresh"]
        )

        @Argument(help: ArgumentHelp("Target: a published directory or s3://bucket/prefix (or $MODELCAST_TARGET).", valueName: "TARGET"))
        var target: String?

        @Option(help: "Key of the manifest in the target (default: manifest.json).")
        var manifestKey = "manifest.json"

        @Option(help: ArgumentHelp("Directory of *.mustache files overriding the built-in templates.", valueName: "DIR"))
        var templates: String?

        @OptionGroup(title: "Signing")
        var signingOptions: SigningOptions

        @OptionGroup(title: "S3 targets")
        var targetOptions: TargetOptions

        @Option(help: ArgumentHelp("Before the manifest goes live, verify the new release through this public base URL.", valueName: "URL"))
        var verifyURL: String?

        @Flag(help: "Show the manifest that would be published; write nothing.")
        var dryRun = false

        @Flag(help: "Print a JSON summary instead of text.")
        var json = false

        func run() async throws {
            let environment = ProcessInfo.processInfo.environment
            guard let target = target ?? environment["MODELCAST_TARGET"] else {
                throw ValidationError("give the TARGET (a directory or s3://bucket/prefix) or set MODELCAST_TARGET")
            }
            var request = ResignRequest(
                manifestKey: manifestKey, signing: try signingOptions.settings(environment: environment) ?? SigningSettings(),
                templatesDirectory: templates, dryRun: dryRun, allowUnsigned: signingOptions.unsigned)
            if let epoch = try sourceDateEpoch(environment) { request.publishedAt = epoch }
            let storage = try targetOptions.settings(for: target).open(environment: environment)
            let report: PublishReport
            do {
                report = try await Publisher(storage: storage, log: { printError($0) }, beforeManifest: verifyGate(verifyURL, manifestKey: manifestKey)).resign(request)
            } catch {
                await closeStorage(storage)
                throw error
            }
            await closeStorage(storage)
            try printPublishReport(report, json: json, done: "re-signed: published", wouldDo: "would re-sign with")
        }
    }
}
