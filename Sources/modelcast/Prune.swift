import ArgumentParser
import Foundation
import ModelCastCore

extension ModelCast {
    struct Prune: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete superseded releases' objects and history records, never what the live manifest needs.",
            discussion: """
                Keeps the N newest releases that went live, the live one's rollback target and \
                any publish under way; objects another channel names always stay.
                More options: modelcast prune --help-hidden
                Details: docs/cli.md#prune
                """
        )

        @OptionGroup(title: "What to keep")
        var pruning: PruneOptions

        @OptionGroup
        var targetOptions: PublishedTargetOptions

        @Flag(help: "List what would be deleted; delete nothing.")
        var dryRun = false

        @OptionGroup
        var progressOptions: ProgressOptions

        func run() async throws {
            Interrupts.shared.setMessage(InterruptMessage.prune)
            let environment = ProcessInfo.processInfo.environment
            let settings = try targetOptions.settings(environment: environment)
            if pruning.abortUploadsOlderThan != nil, !settings.isS3 {
                throw ValidationError("--abort-uploads-older-than applies to s3:// targets, not the directory \(settings.target)")
            }
            let display = progressOptions.display(json: targetOptions.json)
            let request = PruneRequest(
                keep: pruning.keep, manifestKey: targetOptions.manifestKey, dryRun: dryRun, templatesDirectory: targetOptions.templates,
                abortUploadsOlderThan: try pruning.abortUploadsOlderThan.map(parseDuration), progress: display.factory)
            let report = try await withStorage(settings, environment: environment, log: display.log) { storage in
                try await Pruner(storage: storage, log: display.log).prune(request)
            }
            if targetOptions.json {
                print(try JSONOutput.encode(report), terminator: "")
                return
            }
            let verb = report.dryRun ? "would delete" : "deleted"
            print("\(report.dryRun ? "dry run: " : "")kept sequences \(report.keptSequences.map(String.init).joined(separator: ", ")) at \(report.target)")
            for key in report.deleted { print("  \(verb)  \(key)") }
            for upload in report.abortedUploads { print("  \(report.dryRun ? "would abort" : "aborted")  \(upload)") }
            print("\(verb) \(counted(report.deleted.count, "object")), \(report.deletedBytes) bytes of artifacts")
        }
    }
}

/// prune's own options: how many releases stay, and which abandoned uploads go.
struct PruneOptions: ParsableArguments {
    // Unconditional: `--keep -1` is a (bad) value, not an unknown option.
    @Option(parsing: .unconditional, help: ArgumentHelp("Releases that went live to keep, newest first (the live one counts).", valueName: "N"))
    var keep: Int

    // A killed publish leaves multipart uploads whose parts the store keeps, and bills, until aborted.
    @Option(help: ArgumentHelp("S3: abort multipart uploads started at least this long ago (1d, 12h).", valueName: "DURATION"))
    var abortUploadsOlderThan: String?
}
