import ArgumentParser
import Foundation
import ModelCastCore

extension ModelCast {
    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Re-download what a manifest names, as a device would, and check every byte and header.",
            discussion: """
                SOURCE is one of:
                  https://host/prefix/manifest.json
                      the live manifest (http:// only with --allow-http)
                  DIR
                      a published directory, before it is synced: objects are read
                      from disk, headers from DIR/_modelcast/objects.json
                  FILE.json --base-url URL
                      a manifest not yet live: its objects are fetched from the host
                      (its own HTTP headers are not checked: verify its URL once it
                      is served)
                  s3://bucket/prefix
                      the target through the S3 API, with the checks a URL gets:
                      headers as the store keeps them, the signature, the URLs
                      (under the base URL of its history), its history record, every
                      object's size, headers, zip safety and SHA-256 (the store's own
                      checksum, else downloaded and hashed; never the
                      x-amz-meta-sha256 metadata); Range is left to verify URL;
                      --state, --profile, --base-url and --origin do not apply

                Signature (with --public-key, or --require-signature): checked first, on MANIFEST.minisig \
                and any inline signature; a missing, malformed, wrong-key or tampered one fails and \
                nothing the manifest names is fetched. The signed sequence and expiry must match the \
                manifest's. A legacy minisign signature ('Ed', not prehashed) fails unless \
                --allow-legacy-signature.
                Manifest: HTTP 200, size cap, JSON Content-Type, Cache-Control not long-lived, a gzip or \
                deflate Content-Encoding decoded with a warning (verify asks for nothing else; any other \
                fails), every URL absolute, https and under the expected prefix with no '.', '..' or empty \
                path segment below it, expires_at not past, sequence not lower than seen before (--state); \
                valid UTF-8. A directory or s3:// target's live manifest must not be older than a \
                release its history says went live. --origin TARGET (for a manifest URL): the URL must \
                serve the bytes of the origin's live manifest.
                Redirects: every hop must pass the rules a manifest URL passes (https unless --allow-http, \
                under the expected prefix unless --allow-external-urls, no '.', '..' or empty segment) \
                before it is requested; at most 5 are followed.
                Each artifact and rollback target: HTTP 200 with no https→http redirect, Content-Length \
                and streamed SHA-256 as promised (reading stops one byte past the promised size), no \
                Content-Encoding, long-lived immutable Cache-Control, the right Content-Type, a 206 for \
                a Range request, and for zips a central directory safe to unpack, local headers and data \
                descriptors that agree with it, and at most --max-zip-entries entries.
                Exit status 0 only when every check passes (warnings pass unless --strict); 3 when the only \
                failures are hosts that could not be reached (connection refused, DNS failure, no route, \
                connect timeout); 1 for any other failure.
                """
        )

        @Argument(help: ArgumentHelp("Manifest URL, published directory, or local manifest file.", valueName: "SOURCE"))
        var source: String

        @Option(help: ArgumentHelp("URL the objects must live under (repeatable); for a local manifest file, where it will be served.", valueName: "URL"))
        var baseURL: [String] = []

        @Option(help: "Read the manifest as this profile instead of detecting it.")
        var profile: ManifestProfile?

        @Option(help: "Manifest key inside a published directory or s3:// target.")
        var manifestKey = "manifest.json"

        @Option(help: ArgumentHelp("For a directory or s3:// target: verify only this channel (default: every channel the target holds, stable and channels/*/).", valueName: "NAME"))
        var channel: String?

        @Flag(help: "Accept http:// URLs (local testing; iOS refuses plain http).")
        var allowHTTP = false

        @Flag(name: .customLong("allow-external-urls"), help: "Accept object URLs outside the expected prefix.")
        var allowExternalURLs = false

        @Option(help: "Deadline for the whole run, in seconds.")
        var timeout: Double = 600

        @Option(help: "Deadline for the manifest and each small request, in seconds.")
        var requestTimeout: Double = 30

        @Option(help: "Retries, with backoff, for HTTP 5xx answers and failed connections (refused, reset, dropped mid-body, or silent for the idle timeout: --request-timeout, 15 s at most). A request that reaches its deadline is not retried.")
        var retries = 3

        @Option(help: "Downloads in flight at once.")
        var jobs = 4

        @Option(help: ArgumentHelp("JSON file keeping the highest sequence seen per manifest; a lower one fails.", valueName: "FILE"))
        var state: String?

        @Option(help: ArgumentHelp("Trusted minisign public key: a .pub file or the base64 key (repeatable, for key rotation). The manifest's signature is checked first and must be good.", valueName: "KEY"))
        var publicKey: [String] = []

        @Flag(help: "Fail an unsigned manifest (MANIFEST.minisig or an inline signature).")
        var requireSignature = false

        @Option(help: ArgumentHelp("Check each model's OpenSSF model signature with this P-256 public key (PEM) and compare the files it lists with those served (without it: reported present, unchecked).", valueName: "KEY.pub"))
        var modelSigningPublicKey: String?

        @Flag(help: "Accept a legacy minisign signature ('Ed': the manifest signed without prehashing, as minisign -l writes); modelcast writes only prehashed 'ED' signatures.")
        var allowLegacySignature = false

        @Option(help: ArgumentHelp("For a manifest URL: the target the CDN serves from (s3://bucket/prefix or a published directory); the URL must serve the bytes of its live manifest.", valueName: "TARGET"))
        var origin: String?

        @Option(help: ArgumentHelp("For a manifest URL on a stand-in server (modelcast serve): the base URL the release was published for. Its objects must lie under it and are fetched from the same paths on the stand-in.", valueName: "BASE_URL"))
        var standInFor: String?

        @Flag(help: "Fail on warnings too.")
        var strict = false

        @Option(help: ArgumentHelp("Refuse a zip artifact with more entries than this (counted from its end record before its central directory is read).", valueName: "N"))
        var maxZipEntries = ZipInspector.defaultMaxEntries

        @Flag(help: "Print a JSON report instead of a table.")
        var json = false

        @OptionGroup(title: "Progress")
        var progressOptions: ProgressOptions

        @OptionGroup(title: "S3 sources (verify s3://bucket/prefix through the S3 API)")
        var targetOptions: S3ConnectionOptions

        func validate() throws {
            guard timeout > 0, requestTimeout > 0 else { throw ValidationError("--timeout and --request-timeout must be positive") }
            guard retries >= 0, retries <= 10 else { throw ValidationError("--retries must be between 0 and 10, got \(retries)") }
            guard jobs >= 1, jobs <= 64 else { throw ValidationError("--jobs must be between 1 and 64, got \(jobs)") }
            guard maxZipEntries >= 1 else { throw ValidationError("--max-zip-entries must be at least 1, got \(maxZipEntries)") }
            if let standInFor {
                let lower = standInFor.lowercased()
                guard lower.hasPrefix("https://") || lower.hasPrefix("http://"), !(URLComponents(string: standInFor)?.host ?? "").isEmpty else {
                    throw ValidationError("--stand-in-for '\(standInFor)' is not a base URL: give the https:// address the release was published for (its --base-url)")
                }
            }
            if TargetKind(of: source) == .bucket {
                // s3:// reads the target through the S3 API: these would be silently ignored.
                let ignored = [(state != nil, "--state"), (profile != nil, "--profile"), (!baseURL.isEmpty, "--base-url"), (origin != nil, "--origin")].filter(\.0).map(\.1)
                if !ignored.isEmpty {
                    throw ValidationError("\(ignored.joined(separator: ", ")) \(ignored.count == 1 ? "applies" : "apply") to a manifest URL, directory or file, not to \(source): an s3:// target is read through the S3 API (verify its https:// URL to check what devices get)")
                }
            }
        }

        func run() async throws {
            let keys = try publicKey.map(Self.loadPublicKey)
            let display = progressOptions.display(json: json)
            if let channel { try Channels.validate(channel) }
            var options = verifyOptions(publicKeys: keys, progress: display.factory)
            options.modelSigningPublicKey = try modelSigningPublicKey.map(P256PublicKey.load(path:))
            let run = VerifyRun(source: source, manifestKey: manifestKey, channel: channel, options: options)
            if TargetKind(of: source) == .bucket {
                let report = try await withStorage(targetOptions.settings(for: source), environment: ProcessInfo.processInfo.environment, log: display.log) { storage in
                    try await run.verify(store: storage)
                }
                try finish(report)
                return
            }
            let target = try VerifyTarget.resolve(source, baseURLs: baseURL, manifestKey: manifestKey, maxManifestBytes: run.options.maxManifestBytes)
            try checkFlags(against: target)
            let http = run.httpFetcher()
            if let directory = target.directory {
                let report = try await run.verify(directory: directory, environment: ProcessInfo.processInfo.environment)
                await http.shutdown()
                try finish(report)
                return
            }
            let report: VerifyReport
            if let origin {
                report = try await withStorage(targetOptions.settings(for: origin), environment: ProcessInfo.processInfo.environment, log: display.log) {
                    await run.verify(target, http: http, standInFor: standInFor, origin: $0)
                }
            } else {
                report = await run.verify(target, http: http, standInFor: standInFor, origin: nil)
            }
            await http.shutdown()
            try finish(report)
        }

        /// A `--public-key` value: a public key file, or the base64 key.
        static func loadPublicKey(_ value: String) throws -> MinisignPublicKey {
            if FileManager.default.fileExists(atPath: value) { return try MinisignPublicKey.load(path: value) }
            do {
                return try MinisignPublicKey(text: value, source: "--public-key '\(value)'")
            } catch {
                // A path that does not exist reads as bad base64; say both possibilities.
                throw ValidationError("--public-key '\(value)' is neither a public key file nor a base64 public key (\(error))")
            }
        }

        /// What the flags ask verify to check, and how.
        func verifyOptions(publicKeys: [MinisignPublicKey], progress: ProgressFactory?) -> VerifyOptions {
            var options = VerifyOptions()
            options.profile = profile
            options.allowHTTP = allowHTTP
            options.allowExternalURLs = allowExternalURLs
            options.expectedPrefixes = baseURL
            options.timeout = timeout
            options.requestTimeout = requestTimeout
            options.retries = retries
            options.jobs = jobs
            options.statePath = state
            options.strict = strict
            options.progress = progress
            options.publicKeys = publicKeys
            options.requireSignature = requireSignature
            options.maxZipEntries = maxZipEntries
            options.allowLegacySignature = allowLegacySignature
            return options
        }

        /// The flags that apply to some kinds of SOURCE only, checked once SOURCE is resolved.
        func checkFlags(against target: VerifyTarget) throws {
            if standInFor != nil, !target.isHTTP || target.localManifest != nil {
                throw ValidationError("--stand-in-for applies to a manifest URL on a stand-in server (modelcast serve), not to \(source)")
            }
            // A stand-in is a local preview: plain http is what it serves.
            if target.isHTTP, target.localManifest == nil, !allowHTTP, standInFor == nil, target.manifestURL.lowercased().hasPrefix("http://") {
                throw ValidationError("\(target.manifestURL) is plain http: pass --allow-http to verify a local test server")
            }
            if origin != nil, !target.isHTTP || target.localManifest != nil {
                throw ValidationError("--origin applies to a manifest URL (what a CDN serves), not to \(source)")
            }
            if channel != nil, target.directory == nil {
                throw ValidationError("--channel applies to a published directory or s3:// target, not to \(source): a manifest URL or file is one channel's manifest already")
            }
        }

        /// Prints the report and exits with the status it calls for: 0 passed, 3 when the
        /// only failures are hosts that could not be reached, 1 otherwise.
        func finish(_ report: VerifyReport) throws {
            print(json ? try JSONOutput.encode(report) : report.text, terminator: "")
            // The report is the output; the status alone says how it ended (Main maps an
            // ExitCode to the documented status without printing anything more).
            if report.exitStatus != .success { throw ExitCode(report.exitStatus.rawValue) }
        }
    }
}
