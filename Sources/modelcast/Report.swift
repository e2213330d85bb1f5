import ArgumentParser
import Foundation
import ModelCastCore

extension ModelCast {
    struct Report: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Draw a release page: each channel's live release, rollout curve, signature and history.",
            discussion: """
                One self-contained HTML file (no scripts, works offline). `modelcast serve DIR` \
                shows the same page at /_modelcast/report. With --verify the exit status is \
                verify's: 0 passed, 1 a check failed, 3 a host could not be reached.
                More options: modelcast report --help-hidden
                Details: docs/cli.md#report
                """
        )

        @Argument(help: ArgumentHelp("A published directory, s3://bucket/prefix or a manifest URL.", valueName: "SOURCE"))
        var source: String

        @Option(name: [.short, .long], help: ArgumentHelp("Where to write the page (- for stdout; default: modelcast-report.html, or stdout with --json).", valueName: "FILE"))
        var output: String?

        @Flag(help: "Write the page's data as JSON instead of HTML.")
        var json = false

        @Option(help: ArgumentHelp("The moment the page describes: an RFC 3339 time or +DURATION (default: now).", valueName: "TIME"))
        var at: String?

        @Option(help: ArgumentHelp("Only this channel (default: every channel of a directory or s3:// target).", valueName: "NAME"))
        var channel: String?

        @Flag(help: "Also verify each channel (every object re-read) and show each check.")
        var verify = false

        @Option(help: ArgumentHelp("With --verify: a trusted minisign public key, .pub file or base64 (repeatable).", valueName: "KEY"))
        var publicKey: [String] = []

        @Flag(help: ArgumentHelp("With --verify: accept http:// object URLs (local testing).", visibility: .hidden))
        var allowHTTP = false

        @Option(name: .customLong("manifest-key"), help: ArgumentHelp("Key of the manifest in the target.", visibility: .hidden))
        var baseManifestKey = "manifest.json"

        @OptionGroup(title: "S3 targets")
        var s3: S3ConnectionOptions

        func validate() throws {
            if !publicKey.isEmpty, !verify { throw ValidationError("--public-key goes with --verify: the signature is checked by the verify run") }
            if allowHTTP, !verify { throw ValidationError("--allow-http goes with --verify") }
        }

        func run() async throws {
            if let channel { try Channels.validate(channel) }
            try PublishRequest.validateManifestKey(baseManifestKey)
            let now = try moment(at)
            let environment = ProcessInfo.processInfo.environment
            var options = VerifyOptions()
            options.publicKeys = try publicKey.map(Verify.loadPublicKey)
            options.allowHTTP = allowHTTP
            options.now = now
            let verification = verify ? ReportVerification(options: options) : nil
            let parsed = try ReadSource(source)
            if case .manifestURL = parsed, channel != nil {
                throw ValidationError("--channel applies to a directory or s3:// target; a manifest URL names its channel (…/channels/NAME/manifest.json)")
            }
            let page = try await withSource(parsed, settings: s3.settings(for: source), environment: environment, log: { printError($0) }) { scope in
                var page = try await ReleasePageReader.read(scope, baseManifestKey: baseManifestKey, channel: channel, at: now)
                try await verification?.verify(&page, in: scope, baseManifestKey: baseManifestKey)
                return page
            }
            let text = json ? try JSONOutput.encode(page) : page.document
            let destination = output ?? (json ? "-" : "modelcast-report.html")
            if destination == "-" {
                print(text, terminator: "")
            } else {
                try writeFileAtomically(Data(text.utf8), to: destination)
                let verified = page.channels.compactMap(\.verify)
                let outcome = verified.isEmpty ? "" : verified.allSatisfy(\.passed) ? "; verify passed" : "; verify failed"
                print("wrote \(destination): \(counted(page.channels.count, "channel")) of \(page.target) as of \(page.at)\(outcome)")
            }
            // As verify ends: 1 when a check failed, 3 when the only failures were hosts not reached.
            if let status = page.verifyExitStatus, status != .success { throw ExitCode(status.rawValue) }
        }
    }
}
