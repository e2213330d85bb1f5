import ArgumentParser
import Foundation
import ModelCastCore

extension ModelCast {
    struct Rollback: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Publish a manifest that sends every device back to a version that went live before.",
            discussion: """
                Only a version the target's history says went live, with all its objects still \
                stored, is accepted; --bump republishes it under a higher version for clients \
                that only move up.
                More options: modelcast rollback --help-hidden
                Details: docs/cli.md#rollback
                """
        )

        @OptionGroup(title: "Rollback")
        var rollback: RollbackOptions

        @OptionGroup
        var goLive: GoLiveOptions

        @OptionGroup
        var targetOptions: PublishedTargetOptions

        func validate() throws {
            switch (rollback.version, rollback.deprecatedTo) {
            case (nil, nil): throw ValidationError("Missing expected argument '--version <VERSION>' (the version to return to)")
            case (.some(let a), .some(let b)) where a != b: throw ValidationError("--version \(a) and --to \(b) disagree: give --version only")
            default: break
            }
        }

        func run() async throws {
            Interrupts.shared.setMessage(InterruptMessage.goLive)
            let environment = ProcessInfo.processInfo.environment
            if let deprecatedTo = rollback.deprecatedTo, rollback.version == nil {
                printError("warning: rollback --to VERSION is deprecated (publish's --to names a target): use --version \(deprecatedTo)")
            }
            let version = rollback.version ?? rollback.deprecatedTo!
            let request = RollbackRequest(
                version: version, model: rollback.model, bump: rollback.bump, bumpVersion: rollback.bumpTo, manifestKey: targetOptions.manifestKey,
                manifestCacheControl: rollback.manifestCacheControl, baseURL: rollback.baseURL,
                goLive: try goLive.value(environment: environment, templates: targetOptions.templates, adoptLive: rollback.adoptLive))
            let report = try await withStorage(targetOptions.settings(environment: environment), environment: environment) { storage in
                try await RollbackPublisher(writer: goLive.writer(storage, manifestKey: targetOptions.manifestKey)).rollback(request)
            }
            try printPublishReport(report, json: targetOptions.json, done: "rolled back to \(version): published", wouldDo: "would roll back to \(version) with")
        }
    }
}

/// rollback's own options: the version to return to, and how.
struct RollbackOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The version to return to (one that went live before).", valueName: "VERSION"))
    var version: String?

    // The old spelling: publish's --to names a target, so rollback's version is --version now.
    @Option(name: .customLong("to"), help: ArgumentHelp("Deprecated spelling of --version.", visibility: .hidden))
    var deprecatedTo: String?

    @Option(help: "Roll back only this model (multi-model releases).")
    var model: String?

    @Flag(help: "Republish the old bytes under a version higher than any published.")
    var bump = false

    @Option(help: ArgumentHelp("The version --bump publishes under (default: the next that sorts higher).", valueName: "VERSION"))
    var bumpTo: String?

    @Option(help: ArgumentHelp("Cache-Control of the manifest (default: the live manifest's).", visibility: .hidden))
    var manifestCacheControl: String?

    @Option(help: ArgumentHelp("Base URL for the hosting files (default: the release's own).", valueName: "URL", visibility: .hidden))
    var baseURL: String?

    @Flag(help: SafetyHelp.adoptLive)
    var adoptLive = false
}
