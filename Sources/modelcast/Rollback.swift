import ArgumentParser
import Foundation
import ModelCastCore

extension ModelCast {
    struct Rollback: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Publish a manifest that sends every device back to a version that went live before.",
            discussion: """
                The rollback is built from the target's publish history (manifests/*.json): only a \
                version that actually went live, and whose objects are all still stored, is accepted. \
                It is published like any release: the objects are checked, a history record is \
                written, and the manifest is replaced last.

                How each profile's clients move back:
                \(profileTable(\.rollbackRule))

                --model rolls back one model of a multi-model release; the others stay as they are.
                """
        )

        @OptionGroup
        var targetOptions: PublishedTargetOptions

        @Option(help: ArgumentHelp("The version to return to (one that went live before).", valueName: "VERSION"))
        var version: String?

        // The old spelling: publish's --to names a target, so rollback's version is --version now.
        @Option(name: .customLong("to"), help: ArgumentHelp("Deprecated spelling of --version.", visibility: .hidden))
        var deprecatedTo: String?

        func validate() throws {
            switch (version, deprecatedTo) {
            case (nil, nil): throw ValidationError("Missing expected argument '--version <VERSION>' (the version to return to)")
            case (.some(let a), .some(let b)) where a != b: throw ValidationError("--version \(a) and --to \(b) disagree: give --version only")
            default: break
            }
        }

        @Option(help: "Roll back only this model (multi-model releases).")
        var model: String?

        @Flag(help: "Republish the old bytes under a new version higher than any published, so clients that only move up (tiers' string >) install them.")
        var bump = false

        @Option(help: ArgumentHelp("The version --bump publishes under (default: the next patch, minor or major that sorts higher both ways).", valueName: "VERSION"))
        var bumpTo: String?

        @Option(help: "Cache-Control of the manifest (default: the live manifest's).")
        var manifestCacheControl: String?

        @Option(help: ArgumentHelp("Base URL for the hosting files (default: the one the release was published with).", valueName: "URL"))
        var baseURL: String?

        @Flag(help: SafetyHelp.adoptLive)
        var adoptLive = false

        @OptionGroup
        var goLive: GoLiveOptions

        func run() async throws {
            Interrupts.shared.setMessage(InterruptMessage.goLive)
            let environment = ProcessInfo.processInfo.environment
            if let deprecatedTo, version == nil {
                printError("warning: rollback --to VERSION is deprecated (publish's --to names a target): use --version \(deprecatedTo)")
            }
            let version = self.version ?? deprecatedTo!
            let request = RollbackRequest(
                version: version, model: model, bump: bump, bumpVersion: bumpTo, manifestKey: targetOptions.manifestKey,
                manifestCacheControl: manifestCacheControl, baseURL: baseURL,
                goLive: try goLive.value(environment: environment, templates: targetOptions.templates, adoptLive: adoptLive))
            let report = try await withStorage(targetOptions.settings(environment: environment), environment: environment) { storage in
                try await goLive.publisher(storage, manifestKey: targetOptions.manifestKey).rollback(request)
            }
            try printPublishReport(report, json: targetOptions.json, done: "rolled back to \(version): published", wouldDo: "would roll back to \(version) with")
        }
    }
}
