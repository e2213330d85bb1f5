import ArgumentParser
import Foundation
import ModelCastCore

/// The published target rollback, prune and resign work on, and what they share.
struct PublishedTargetOptions: ParsableArguments {
    @Argument(help: ArgumentHelp("Target: a published directory or s3://bucket/prefix (or $MODELCAST_TARGET).", valueName: "TARGET"))
    var target: String?

    @Option(name: .customLong("manifest-key"), help: ArgumentHelp("Key of the manifest in the target.", visibility: .hidden))
    var baseManifestKey = "manifest.json"

    // stable is at the manifest key, any other NAME at channels/NAME/<manifest key>.
    @Option(help: ArgumentHelp("Release channel.", valueName: "NAME"))
    var channel = Channels.stable

    /// The channel's manifest key.
    var manifestKey: String { Channels.manifestKey(channel: channel, base: baseManifestKey) }

    @Option(help: ArgumentHelp("Directory of *.mustache files overriding the built-in templates.", valueName: "DIR", visibility: .hidden))
    var templates: String?

    @Flag(help: "Print a JSON summary instead of text.")
    var json = false

    @OptionGroup(title: "S3 targets")
    var s3: S3ConnectionOptions

    /// How to reach the target: the TARGET argument, or `$MODELCAST_TARGET`.
    func settings(environment: [String: String]) throws -> TargetSettings {
        guard let target = target ?? environment["MODELCAST_TARGET"] else {
            throw ValidationError("give the TARGET (a directory or s3://bucket/prefix) or set MODELCAST_TARGET")
        }
        try PublishRequest.validateManifestKey(baseManifestKey)
        try Channels.validate(channel)
        return s3.settings(for: target)
    }
}

/// Opens the target, runs `body` with it, and closes it whether `body` succeeds or fails.
/// `log` writes the store's messages (a progress display's, so they never cut a bar).
func withStorage<T>(_ settings: TargetSettings, environment: [String: String], log: @escaping @Sendable (String) -> Void = { printError($0) },
                    _ body: (any Storage) async throws -> T) async throws -> T {
    let storage = try settings.open(environment: environment, log: log)
    do {
        let result = try await body(storage)
        await storage.close()
        return result
    } catch {
        await storage.close()
        throw error
    }
}

/// An `--at TIME` value (an RFC 3339 time, or +DURATION from now), or now when not given.
func moment(_ at: String?) throws -> Date {
    guard let at else { return Date() }
    if at.hasPrefix("+") { return Date().addingTimeInterval(try parseDuration(String(at.dropFirst()))) }
    guard let date = parseTimestamp(at) else {
        throw ValidationError("--at '\(at)' is neither an RFC 3339 time (2026-12-01T00:00:00Z) nor +DURATION (+24h)")
    }
    return date
}

/// `SOURCE_DATE_EPOCH` as a date (reproducible manifests), or nil when unset.
func sourceDateEpoch(_ environment: [String: String]) throws -> (date: Date, origin: String)? {
    guard let epoch = environment["SOURCE_DATE_EPOCH"] else { return nil }
    guard let seconds = TimeInterval(epoch) else {
        throw ValidationError("SOURCE_DATE_EPOCH must be a number of seconds, got '\(epoch)'")
    }
    return (Date(timeIntervalSince1970: seconds), "SOURCE_DATE_EPOCH=\(epoch)")
}

/// What rollback, resign, promote and rollout share: how the new manifest is proven,
/// signed and gated before it goes live.
struct GoLiveOptions: ParsableArguments {
    @OptionGroup(title: "Signing")
    var signingOptions: SigningOptions

    @Flag(help: SafetyHelp.trustStored)
    var trustStored = false

    @Option(help: ArgumentHelp("Verify the staged release at this base URL first.", valueName: "URL"))
    var verifyURL: String?

    @Flag(help: "Show the plan and the manifest; write nothing.")
    var dryRun = false

    /// The signing settings (key loaded), or nil for an unsigned manifest.
    func signing(environment: [String: String]) throws -> SigningSettings? {
        try signingOptions.settings(environment: environment)
    }

    /// How the command's release goes live, built once: these flags, the templates
    /// directory, `--adopt-live` where the command has it, and `SOURCE_DATE_EPOCH`.
    func value(environment: [String: String], templates: String?, adoptLive: Bool = false) throws -> GoLive {
        let epoch = try sourceDateEpoch(environment)
        return GoLive(
            templatesDirectory: templates, dryRun: dryRun, publishedAt: epoch?.date ?? Date(), publishedAtOrigin: epoch?.origin,
            signing: try signing(environment: environment), allowUnsigned: signingOptions.unsigned, trustStored: trustStored, adoptLive: adoptLive)
    }

    /// A writer for `storage` that logs to standard error and, with --verify-url, checks
    /// the staged manifest of `manifestKey` through the public URL before it goes live.
    func writer(_ storage: any Storage, manifestKey: String) throws -> TargetWriter {
        TargetWriter(storage: storage, log: { printError($0) }, beforeManifest: try verifyGate(verifyURL, manifestKey: manifestKey)?(storage))
    }
}

/// Help shared by the commands that make a release live.
enum SafetyHelp {
    static let trustStored = ArgumentHelp(
        "Accept a stored object's size where the store keeps no SHA-256 checksum of it.", visibility: .hidden)
    // A deleted record, or another tool: the new sequence goes above the live one.
    static let adoptLive = ArgumentHelp(
        "Continue from a live manifest that no history record explains.", visibility: .hidden)
}

/// Prints what a publish, rollback or resign did: a table, or JSON.
func printPublishReport(_ report: PublishReport, json: Bool, done: String, wouldDo: String) throws {
    if json {
        print(try JSONOutput.encode(report), terminator: "")
        return
    }
    if report.unchanged {
        print("unchanged: \(report.target) already serves this release (sequence \(report.sequence)); nothing was written")
        return
    }
    print("\(report.dryRun ? "dry run: \(wouldDo)" : done) sequence \(report.sequence) to \(report.target) (profile \(report.profile))")
    // What was already stored is one line per model (an unchanged model uploads nothing).
    let listed = report.objects.filter { $0.outcome != "unchanged" && $0.outcome != "exists" }
    let reused = report.models.filter { $0.reused > 0 }
    let width = (listed.map(\.outcome.count) + (reused.isEmpty ? [] : ["unchanged".count])).max() ?? 0
    for object in listed {
        print("  \(object.outcome.padding(toLength: width, withPad: " ", startingAt: 0))  \(object.key)  \(object.size) bytes  sha256 \(object.sha256)")
    }
    for model in reused {
        let files = model.reused == model.files ? counted(model.files, "file") : "\(model.reused) of \(model.files) files"
        print("  \("unchanged".padding(toLength: width, withPad: " ", startingAt: 0))  \(model.name) \(model.version): \(files) already stored, not uploaded")
    }
    print("manifest: \(report.manifestURL)")
    if report.dryRun { print(report.manifest, terminator: "") }
}

/// The `--verify-url` gate for the store a release is published to: the staged manifest is
/// checked through the public URL before it goes live; nil when no URL was given. The URL
/// is checked now, before anything is uploaded.
func verifyGate(_ verifyURL: String?, manifestKey: String) throws -> (@Sendable (any Storage) -> @Sendable (Data) async throws -> Void)? {
    guard let verifyURL else { return nil }
    try PublishRequest.validateBaseURL(verifyURL)
    return { storage in
        { @Sendable manifest in
            // A directory served by `modelcast serve` answers only what is live: the staged
            // objects are listed for it while the check runs.
            let exposure = try StagedReleaseExposure.expose(manifest, baseURL: verifyURL, storage: storage)
            defer { exposure?.withdraw() }
            try await verifyStaged(manifest, manifestKey: manifestKey, baseURL: verifyURL)
        }
    }
}

/// `--verify-url`: the staged manifest, checked through the public URL.
func verifyStaged(_ manifest: Data, manifestKey: String, baseURL: String) async throws {
    var options = VerifyOptions()
    options.expectedPrefixes = [baseURL]
    options.allowHTTP = baseURL.lowercased().hasPrefix("http://")
    let url = URLParts.url(base: baseURL, key: manifestKey)
    let report = try await withSource(try ReadSource(url), environment: [:]) { scope in
        await Verifier(fetcher: scope.http(), options: options).verify(manifestURL: url, localManifest: manifest)
    }
    let failures = report.checks.filter { $0.status == .fail }
    guard failures.isEmpty else {
        throw ModelCastError.commitFailed("--verify-url \(baseURL): the staged release fails \(counted(failures.count, "check")); the manifest was not published:\n" + failures.map { "  \($0.check) \($0.subject): \($0.detail)" }.joined(separator: "\n"))
    }
    printError("verified the staged release through \(baseURL): \(counted(report.checks.count, "check")) passed")
}

/// What a command says when interrupted before anything went live (SIGINT, SIGTERM):
/// the line starts "interrupted by SIGINT: ". A commit in progress finishes first and
/// says what went live instead (Interrupts).
enum InterruptMessage {
    static let publish = "nothing went live (the live manifest is unchanged) and what this run staged was removed; run the same command again to publish (objects already stored are reused, an interrupted upload resumes)"
    static let goLive = "nothing went live (the live manifest is unchanged); run the same command again"
    static let prune = "prune stopped part-way: the live release and every object a kept release names are intact; run the same command again to finish"
}
