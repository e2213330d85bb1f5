import ArgumentParser
import Foundation
import ModelCastCore

extension ModelCast {
    struct Prune: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete superseded releases' objects and history records, never what the live manifest needs.",
            discussion: """
                Keeps the N newest distinct releases that went live (the live one included; \
                re-signs of one release count once, and its newest record stays), the live \
                manifest's rollback target, and any record newer than the live one (a publish under \
                way). Everything they name stays; objects only older releases named are deleted, \
                then those releases' history records. It prunes one channel's history \
                (--channel, default stable); artifacts are shared, so an object any record of \
                another channel names always stays. The hosting files are rewritten first, so \
                they never list a deleted object, and so is the history index (naming the kept \
                records only); deleting is the last step. --dry-run lists what would go.

                prune reads every history record, and looks up every object only older releases \
                named, eight requests at a time, so its cost grows with the history (publish, \
                rollback, resign and verify read the history index instead).

                On S3, --abort-uploads-older-than also aborts multipart uploads a killed publish \
                left behind (the store keeps, and bills, their parts until then).
                """
        )

        @OptionGroup
        var targetOptions: PublishedTargetOptions

        // Unconditional: `--keep -1` is a (bad) value, not an unknown option.
        @Option(parsing: .unconditional, help: ArgumentHelp("Distinct releases that went live to keep, newest first (the live one counts).", valueName: "N"))
        var keep: Int

        @Option(help: ArgumentHelp("S3: abort multipart uploads started at least this long ago (e.g. 1d, 12h).", valueName: "DURATION"))
        var abortUploadsOlderThan: String?

        @Flag(help: "List what would be deleted; delete nothing.")
        var dryRun = false

        @OptionGroup(title: "Progress")
        var progressOptions: ProgressOptions

        func run() async throws {
            Interrupts.shared.setMessage(InterruptMessage.prune)
            let environment = ProcessInfo.processInfo.environment
            let settings = try targetOptions.settings(environment: environment)
            if abortUploadsOlderThan != nil, !settings.isS3 {
                throw ValidationError("--abort-uploads-older-than applies to s3:// targets, not the directory \(settings.target)")
            }
            let display = progressOptions.display(json: targetOptions.json)
            let request = PruneRequest(
                keep: keep, manifestKey: targetOptions.manifestKey, dryRun: dryRun, templatesDirectory: targetOptions.templates,
                abortUploadsOlderThan: try abortUploadsOlderThan.map(parseDuration), progress: display.factory)
            let report = try await withStorage(settings, environment: environment, log: display.log) { storage in
                try await Publisher(storage: storage, log: display.log).prune(request)
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
