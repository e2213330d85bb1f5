import ArgumentParser
import Foundation
import ModelCastCore

extension ModelCast {
    struct Resign: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Re-sign the live manifest with a new expiry and the next sequence; no artifact changes.",
            discussion: """
                Run it on a schedule, well before the expiry, so a signed, expiring manifest never \
                lapses. Without --expires-in the live manifest's validity period is kept.
                More options: modelcast resign --help-hidden
                Details: docs/cli.md#resign
                """,
            aliases: ["refresh"]
        )

        @OptionGroup
        var goLive: GoLiveOptions

        @OptionGroup
        var targetOptions: PublishedTargetOptions

        func run() async throws {
            Interrupts.shared.setMessage(InterruptMessage.goLive)
            let environment = ProcessInfo.processInfo.environment
            let request = ResignRequest(manifestKey: targetOptions.manifestKey, goLive: try goLive.value(environment: environment, templates: targetOptions.templates))
            let report = try await withStorage(targetOptions.settings(environment: environment), environment: environment) { storage in
                try await Resigner(writer: goLive.writer(storage, manifestKey: targetOptions.manifestKey)).resign(request)
            }
            if request.signing.signer == nil {
                // No key: only the expiry moved, and the manifest stays unsigned; say so.
                // try?: only for the message: without it, no expiry is named.
                let expiry = (try? Release.decode(Data(report.manifest.utf8), source: "the new manifest"))?.expiresAt.map { " (expires_at \($0))" } ?? ""
                try printPublishReport(report, json: targetOptions.json, done: "unsigned, so nothing was signed: renewed the expiry\(expiry) and published",
                                       wouldDo: "unsigned, so nothing would be signed: would renew the expiry\(expiry) with")
            } else {
                try printPublishReport(report, json: targetOptions.json, done: "re-signed: published", wouldDo: "would re-sign with")
            }
        }
    }
}
