import ArgumentParser
import Foundation
import ModelCastCore

extension ModelCast {
    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Re-download what a manifest names, as a device would, and check every byte and header.",
            discussion: """
                SOURCE is a manifest URL, a published directory, s3://bucket/prefix, or a manifest \
                file with --base-url. Exit status: 0 when every check passes, 3 when the only \
                failures are unreachable hosts, 1 otherwise.
                More options: modelcast verify --help-hidden
                Details: docs/cli.md#verify
                """
        )

        @Argument(help: ArgumentHelp("Manifest URL, published directory, s3://bucket/prefix or manifest file.", valueName: "SOURCE"))
        var source: String

        @OptionGroup(title: "Signatures and freshness")
        var trust: VerifyTrustOptions

        @OptionGroup(title: "Where objects may come from")
        var urls: VerifyURLOptions

        @OptionGroup(title: "Limits")
        var limits: VerifyLimitOptions

        @OptionGroup(title: "Directory and S3 sources")
        var sources: VerifySourceOptions

        @Option(help: ArgumentHelp("Read the manifest as this profile, not detected.", visibility: .hidden))
        var profile: ManifestProfile?

        @Flag(help: "Print a JSON report instead of a table.")
        var json = false

        @OptionGroup
        var progressOptions: ProgressOptions

        func validate() throws {
            for (flag, seconds) in [("--timeout", limits.timeout), ("--request-timeout", limits.requestTimeout)] where !(seconds > 0) {
                throw ValidationError("\(flag) must be positive, got \(String(format: "%g", seconds))")
            }
            guard limits.retries >= 0, limits.retries <= 10 else { throw ValidationError("--retries must be between 0 and 10, got \(limits.retries)") }
            guard limits.jobs >= 1, limits.jobs <= 64 else { throw ValidationError("--jobs must be between 1 and 64, got \(limits.jobs)") }
            guard limits.maxZipEntries >= 1 else { throw ValidationError("--max-zip-entries must be at least 1, got \(limits.maxZipEntries)") }
            if let standInFor = urls.standInFor {
                let lower = standInFor.lowercased()
                guard lower.hasPrefix("https://") || lower.hasPrefix("http://"), !(URLComponents(string: standInFor)?.host ?? "").isEmpty else {
                    throw ValidationError("--stand-in-for '\(standInFor)' is not a base URL: give the https:// address the release was published for (its --base-url)")
                }
            }
            if TargetKind(of: source) == .bucket {
                // s3:// reads the target through the S3 API: these would be silently ignored.
                let ignored = [(trust.state != nil, "--state"), (profile != nil, "--profile"), (!urls.baseURL.isEmpty, "--base-url"), (urls.origin != nil, "--origin")].filter(\.0).map(\.1)
                if !ignored.isEmpty {
                    throw ValidationError("\(ignored.joined(separator: ", ")) \(ignored.count == 1 ? "applies" : "apply") to a manifest URL, directory or file, not to \(source): an s3:// target is read through the S3 API (verify its https:// URL to check what devices get)")
                }
            }
        }

        func run() async throws {
            let keys = try trust.publicKey.map(Self.loadPublicKey)
            let display = progressOptions.display(json: json)
            if let channel = sources.channel { try Channels.validate(channel) }
            var options = verifyOptions(publicKeys: keys, progress: display.factory)
            options.modelSigningPublicKey = try trust.modelSigningPublicKey.map(P256PublicKey.load(path:))
            let pinned = try trust.trustedKeys.map { path in
                guard keys.isEmpty else { throw ValidationError("--trusted-keys and --public-key cannot be combined: the key set names the manifest keys") }
                return try readCapped(path, limit: KeySet.maxBytes, what: "a key set")
            }
            let parsed = try ReadSource(source)
            try checkFlags(against: parsed)
            let environment = ProcessInfo.processInfo.environment
            let idle = VerifyRun(source: source, manifestKey: sources.manifestKey, channel: sources.channel, options: options).httpIdleTimeout
            let report = try await withSource(parsed, settings: sources.s3.settings(for: source), environment: environment,
                                              httpIdleTimeout: idle, log: display.log) { scope in
                var options = options
                var chain: KeySetChainReport?
                if let pinned {
                    // The chain first, as a device walks it: the manifest keys it ends on are the ones verify then checks with.
                    let manifestKey: String
                    if case .manifestURL(let url) = parsed, let split = TargetKeys.splitAtRoot(manifestLocation: url) {
                        manifestKey = split.manifestKey
                    } else {
                        manifestKey = Channels.manifestKey(channel: sources.channel ?? Channels.stable, base: sources.manifestKey)
                    }
                    let now = Date()
                    let checked = try await KeySetVerification.run(
                        pinned: pinned, pinnedSource: "--trusted-keys " + quotedValue(trust.trustedKeys ?? ""), manifest: try await scope.manifest(key: manifestKey), manifestKey: manifestKey,
                        channel: sources.channel ?? Channels.stable, now: now, fetch: try scope.keySetFetch())
                    for line in checked.lines(now: now) { json ? printError(line) : print(line) }
                    options.publicKeys = checked.current.manifest.keys
                    chain = checked.report(now: now)
                }
                let run = VerifyRun(source: source, manifestKey: sources.manifestKey, channel: sources.channel, options: options)
                var report = try await run.verify(in: scope, standInFor: urls.standInFor, origin: urls.origin.map { sources.s3.settings(for: $0) })
                report.keySets = chain
                return report
            }
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
            options.allowHTTP = urls.allowHTTP
            options.allowExternalURLs = urls.allowExternalURLs
            options.expectedPrefixes = urls.baseURL
            options.timeout = limits.timeout
            options.requestTimeout = limits.requestTimeout
            options.retries = limits.retries
            options.jobs = limits.jobs
            options.statePath = trust.state
            options.strict = trust.strict
            options.progress = progress
            options.publicKeys = publicKeys
            options.requireSignature = trust.requireSignature
            options.maxZipEntries = limits.maxZipEntries
            options.segments = limits.segments
            options.allowLegacySignature = trust.allowLegacySignature
            return options
        }

        /// The flags that apply to some kinds of SOURCE only, checked once SOURCE is parsed.
        func checkFlags(against parsed: ReadSource) throws {
            let isManifestURL = if case .manifestURL = parsed { true } else { false }
            if urls.standInFor != nil, !isManifestURL {
                throw ValidationError("--stand-in-for applies to a manifest URL on a stand-in server (modelcast serve), not to \(source)")
            }
            // A stand-in is a local preview: plain http is what it serves.
            if isManifestURL, !urls.allowHTTP, urls.standInFor == nil, source.lowercased().hasPrefix("http://") {
                throw ValidationError("\(source) is plain http: pass --allow-http to verify a local test server")
            }
            if urls.origin != nil, !isManifestURL {
                throw ValidationError("--origin applies to a manifest URL (what a CDN serves), not to \(source)")
            }
            switch parsed {
            case .manifestURL, .manifestFile:
                if sources.channel != nil {
                    throw ValidationError("--channel applies to a published directory or s3:// target, not to \(source): a manifest URL or file is one channel's manifest already")
                }
            case .bucket, .directory: break
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

/// verify's trust options: which signatures must be good, and what counts as stale.
struct VerifyTrustOptions: ParsableArguments {
    // The signature is checked first; a missing, malformed, wrong-key or tampered one fails
    // and nothing the manifest names is fetched.
    @Option(help: ArgumentHelp("Trusted minisign public key: a .pub file or the base64 key (repeatable).", valueName: "KEY"))
    var publicKey: [String] = []

    // The app's pinned key set: the chain is walked from it (32 versions at most, 64 KiB each)
    // and the manifest needs its newest version's manifest threshold (docs/signing.md#key-sets).
    @Option(help: ArgumentHelp("The key set an app pins (keys/1.json or later): walk the chain and check the manifest threshold.", valueName: "FILE"))
    var trustedKeys: String?

    @Flag(help: "Fail an unsigned manifest.")
    var requireSignature = false

    // Without it, a model signature is reported present, unchecked.
    @Option(help: ArgumentHelp("Check each model's OpenSSF model signature with this P-256 public key (PEM).", valueName: "KEY.pub"))
    var modelSigningPublicKey: String?

    // 'Ed': the manifest signed without prehashing, as minisign -l writes; modelcast writes only 'ED'.
    @Flag(help: ArgumentHelp("Accept a legacy minisign signature ('Ed', not prehashed)."))
    var allowLegacySignature = false

    @Option(help: ArgumentHelp("JSON file keeping the highest sequence seen per manifest; a lower one fails.", valueName: "FILE"))
    var state: String?

    @Flag(help: "Fail on warnings too.")
    var strict = false
}

/// verify's rules for the URLs a manifest names, and where to fetch them.
struct VerifyURLOptions: ParsableArguments {
    @Option(help: ArgumentHelp("URL the objects must live under (repeatable); for a manifest file, where it will be served.", valueName: "URL"))
    var baseURL: [String] = []

    @Flag(help: "Accept http:// URLs (local testing; iOS refuses plain http).")
    var allowHTTP = false

    @Flag(name: .customLong("allow-external-urls"), help: ArgumentHelp("Accept object URLs outside the expected prefix.", visibility: .hidden))
    var allowExternalURLs = false

    @Option(help: ArgumentHelp("For a manifest URL: the target the CDN serves from; it must serve its live manifest.", valueName: "TARGET"))
    var origin: String?

    // The objects must lie under BASE_URL and are fetched from the same paths on the stand-in.
    @Option(help: ArgumentHelp("For a manifest URL on modelcast serve: the base URL the release was published for.", valueName: "BASE_URL", visibility: .hidden))
    var standInFor: String?
}

/// verify's deadlines, retries and size limits.
struct VerifyLimitOptions: ParsableArguments {
    @Option(help: "Deadline for the whole run, in seconds.")
    var timeout: Double = 600

    @Option(help: ArgumentHelp("Deadline for the manifest and each small request, in seconds.", visibility: .hidden))
    var requestTimeout: Double = 30

    // Retried: HTTP 5xx and failed connections (refused, reset, dropped mid-body, or silent for
    // the idle timeout: --request-timeout, 15 s at most); a request at its deadline is not.
    @Option(help: ArgumentHelp("Retries, with backoff, for HTTP 5xx answers and failed connections.", visibility: .hidden))
    var retries = 3

    @Option(help: ArgumentHelp("Downloads in flight at once.", visibility: .hidden))
    var jobs = 4

    // Counted from its end record before its central directory is read.
    @Option(help: ArgumentHelp("Refuse a zip artifact with more entries than this.", valueName: "N"))
    var maxZipEntries = ZipInspector.defaultMaxEntries

    // sample: every byte hashed once (the artifact), the index proven and 8 segments fetched
    // by range; all: every segment hashed too, a second pass (docs/verifying.md).
    @Option(help: ArgumentHelp("Segments of an index: sample 8, or hash all.", valueName: "MODE"))
    var segments = SegmentCheck.sample
}

extension SegmentCheck: ExpressibleByArgument {}

/// How verify reads a published directory or an s3:// target.
struct VerifySourceOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Manifest key inside a published directory or s3:// target.", visibility: .hidden))
    var manifestKey = "manifest.json"

    @Option(help: ArgumentHelp("Verify only this channel (default: every channel the target holds).", valueName: "NAME"))
    var channel: String?

    @OptionGroup
    var s3: S3ConnectionOptions
}
