import Foundation
import ModelCastFormat

/// The app side of modelcast: checks the manifest, downloads, proves and installs models,
/// and obeys rollbacks and staged rollouts; picks each model's variant for this device
/// (`ClientConfiguration.device`), follows download policies (`update(_:)`,
/// `request(_:)`), and goes back to a kept version when the app reports one unusable
/// (`reportUnusable`). One instance per manifest (channel).
///
///     let updater = try ModelUpdater(configuration)
///     let outcome = try await updater.update()
///     let model = updater.installed("tiny-llm")?.mainFile
///
/// Its contract:
/// - No manifest, signed or not, makes it read, write or delete outside
///   `configuration.directory`: every value is parsed (`ModelCastFormat`'s types) before
///   anything touches the disk, and paths are built from the parsed values only.
/// - `update()`, `update(_:)`, `request(_:)` and `check()` run one at a time: a second
///   call waits for the first. So do calls from other processes (an app extension) or
///   other updaters on the same directory: each holds the directory's lock
///   (`state.lock`, an advisory `flock`), and a call waits for it at most
///   `ClientConfiguration.directoryLockTimeout` seconds, then throws `directoryBusy`.
///   `reportUnusable` does not wait for an update of this process: it is offline and
///   instant; it waits for another process's.
/// - Cancelling the task running `update()` stops its network and disk work at once,
///   keeps a partial download for the next attempt, and leaves the installed models as
///   they were; it throws `CancellationError`. Every other failure is a `ClientError`.
/// - `installed(_:)` and `installedModels()` read the disk alone: they work offline, and
///   after a crash or a lost `state.json`.
public actor ModelUpdater {
    public nonisolated let configuration: ClientConfiguration
    /// Download progress of the update under way (bytes on disk of the whole update).
    public nonisolated let progress: AsyncStream<UpdateProgress>
    private let progressContinuation: AsyncStream<UpdateProgress>.Continuation
    // The work, each piece in its own type; `apply` runs them in order.
    /// What is installed, read from the disk alone (`installer.modelsDirectory`).
    nonisolated let modelsDirectory: ModelsDirectory
    /// `state.json`, read (completed from the disk when it lacks what is installed).
    nonisolated let stateFile: StateFile
    /// What a call would do: the manifest it accepts and its plan.
    nonisolated let checker: UpdateCheck
    /// Fetches and proves what an update installs, within the caps and the free space.
    nonisolated let downloads: UpdateDownloads
    /// Builds version directories from proven downloads, unpacks zips, switches links.
    nonisolated let installer: Installer
    /// Switches links and state together, reverts, and tidies up after a switch.
    nonisolated let switcher: VersionSwitch
    /// Each file's download, streamed and resumed, or by a background task.
    nonisolated let downloader: Downloader
    /// One session for every request of this updater (connections are reused).
    let http: HTTPStream
    /// What the last `update()` or `request(_:)` downloaded, file by file (empty when it downloaded nothing).
    public private(set) var lastDownloads: [FileDownload] = []
    /// The plan the last `update()` or `request(_:)` acted on (its `waiting` models, its
    /// `evictions`); nil when the manifest had not changed.
    public private(set) var lastPlan: UpdatePlan?
    /// The licences the user accepted (`acceptLicence`), in `licences.json`.
    nonisolated let licences: LicenceAcceptances
    /// When each model was last put to use (`beginUse`), in `last-use.json`.
    nonisolated let lastUse: LastUse
    /// Models in use now (`beginUse` less `endUse`), with how many uses each.
    var inUse: [String: Int] = [:]
    /// What the app last reported about the device (`setConditions`).
    var conditions: DeviceConditions
    /// True while an update or a check runs; the calls that wait for it, in order.
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// `sessionConfiguration`: the app's own `URLSessionConfiguration` (e.g. with
    /// `allowsCellularAccess = false` or `allowsConstrainedNetworkAccess = false`); the
    /// client copies it and turns its cache off. Default: an ephemeral session.
    public init(_ configuration: ClientConfiguration, sessionConfiguration: URLSessionConfiguration? = nil) throws {
        try configuration.validate()
        self.configuration = configuration
        let downloadsDirectory = configuration.directory.appendingPathComponent("downloads")
        // Created now, at launch (before anything that would need undoing if it is refused):
        // a relaunched app is handed the session's finished transfers once the session exists.
        let background = try configuration.backgroundDownloads.flatMap { $0.hasSession ? $0 : nil }.map { settings in
            (session: try BackgroundSession.session(settings, downloads: downloadsDirectory, timeout: configuration.requestTimeout, base: sessionConfiguration),
             minimumFileSize: settings.minimumFileSize)
        }
        let installer = Installer(directory: configuration.directory.appendingPathComponent("models"))
        let http = HTTPStream(timeout: configuration.requestTimeout, bounds: TransferBounds(configuration), base: sessionConfiguration)
        let downloader = Downloader(directory: downloadsDirectory, retries: configuration.retries, http: http, background: background)
        let stateFile = StateFile(path: configuration.directory.appendingPathComponent("state.json"), modelsDirectory: installer.modelsDirectory,
                                  configuration: configuration)
        let (progress, progressContinuation) = AsyncStream.makeStream(of: UpdateProgress.self, bufferingPolicy: .bufferingNewest(64))
        self.installer = installer
        self.http = http
        self.downloader = downloader
        self.stateFile = stateFile
        self.progress = progress
        self.progressContinuation = progressContinuation
        licences = LicenceAcceptances(path: configuration.directory.appendingPathComponent("licences.json"))
        lastUse = LastUse(path: configuration.directory.appendingPathComponent("last-use.json"))
        conditions = configuration.conditions
        modelsDirectory = installer.modelsDirectory
        checker = UpdateCheck(configuration: configuration, http: http, modelsDirectory: installer.modelsDirectory, downloader: downloader,
                              statePath: stateFile.path)
        downloads = UpdateDownloads(configuration: configuration, http: http, installer: installer, downloader: downloader, progress: progressContinuation)
        switcher = VersionSwitch(configuration: configuration, installer: installer, downloader: downloader, stateFile: stateFile)
        do {
            try FileManager.default.createDirectory(at: configuration.directory, withIntermediateDirectories: true)
        } catch {
            throw ClientError.io(configuration.directory, error)
        }
        #if canImport(Darwin)
        if configuration.excludeFromBackup {
            // Models can be downloaded again: they do not belong in the user's backups.
            var values = URLResourceValues()
            values.isExcludedFromBackup = true
            var directory = configuration.directory
            do { try directory.setResourceValues(values) } catch { throw ClientError.io(configuration.directory, error) }
        }
        #endif
    }

    deinit {
        http.invalidate()
        progressContinuation.finish()
    }

    /// The version of `name` in use, if one is installed. Reads the disk only (offline, and
    /// after a crash between an install and its state write).
    public nonisolated func installed(_ name: String) -> InstalledModel? {
        guard let name = try? ModelName(name) else { return nil }  // no model can have that name
        return modelsDirectory.installed(name)
    }

    /// Every model installed, by name. Reads the disk only.
    public nonisolated func installedModels() -> [InstalledModel] {
        modelsDirectory.installedModels()
    }

    /// Fetches and proves the manifest and says what `update()` would do, without
    /// downloading anything. nil when the manifest has not changed since the last update
    /// that covered every model.
    public func check() async throws -> UpdatePlan? {
        try await check(.onDemand)
    }

    /// What `update(policy)` would do, without downloading anything. nil when the manifest
    /// has not changed since an update that covered at least the same models.
    public func check(_ policy: DownloadPolicy) async throws -> UpdatePlan? {
        try await exclusively {
            var state = stateFile.load()
            guard let checked = try await checker.acceptedManifest(&state, scope: .policy(policy)) else { return nil }
            return try checker.plan(checked.release, state: state, scope: .policy(policy), context: planContext()).plan
        }
    }

    /// Checks the manifest and, when it names other models than those installed, downloads,
    /// proves and installs them: every model the manifest names for this device, whatever
    /// its download policy, as this client did before policies existed. (An app that uses
    /// policies calls `update(_:)` and `request(_:)` instead.) Equal to `update(.onDemand)`.
    /// A failure leaves every installed model as it was.
    public func update() async throws -> UpdateOutcome {
        try await update(.onDemand)
    }

    /// The update of the models `policy` covers, for an app that uses download policies:
    ///
    ///     try await updater.update(.essential)   // at first launch: waits for the essential models only
    ///     Task { try await updater.update(.prefetch) }   // then in the background
    ///     let big = try await updater.request("big-model")   // an on-demand model, when the user wants it
    ///
    /// - `.essential`: the models whose policy is essential.
    /// - `.prefetch`: the essential and prefetch models, and the on-demand models this
    ///   device has installed (`request(_:)`): once requested, a model is kept up to date.
    /// - `.onDemand`: every model, as `update()`.
    ///
    /// A model's policy is the app's (`ClientConfiguration.downloadPolicies`), else the
    /// manifest's `download`, else `prefetch`. Models the call does not cover are left as
    /// they are (not downloaded, switched or pruned); models the manifest no longer names
    /// are removed, as by every update. Before anything is downloaded,
    /// `ClientConfiguration.shouldDownload` is asked. A failure leaves every installed
    /// model as it was.
    public func update(_ policy: DownloadPolicy) async throws -> UpdateOutcome {
        try await exclusively { try await performUpdate(.policy(policy)) }
    }

    /// Downloads, proves and installs the model `name` now (an on-demand one, typically; any
    /// model works) and returns it. From then on `update(.prefetch)` and `update()` keep it
    /// up to date as long as it stays installed. The manifest is fetched whole (never a
    /// 304), so the version is the latest; other models are left as they are; installed at
    /// that version already, it is returned without a download. `shouldDownload` is not
    /// asked: the app asked for this model.
    ///
    /// When the device meets none of the model's variants, the version installed is
    /// returned, or `ClientError.noVariantForDevice` thrown (naming what the device lacks
    /// for each). A version refused by `reportUnusable` is not installed again: the one in
    /// use is returned. A name the manifest does not have throws `unknownModel`.
    public func request(_ name: String) async throws -> InstalledModel {
        let url = configuration.manifestURL.absoluteString
        // No manifest can name it: unknown, as a name the manifest lacks.
        guard let model = try? ModelName(name) else { throw ClientError.unknownModel(url: url, model: name) }
        if let wanted = configuration.models, !wanted.contains(name) {
            throw ClientError.configuration(reason: "models does not name \(quotedValue(name)), so it cannot be requested")
        }
        return try await exclusively {
            var state = stateFile.load()
            // No If-None-Match is sent: only a broken server answers 304.
            guard let checked = try await checker.acceptedManifest(&state, scope: .model(model)) else { throw ClientError.http(url: url, status: 304) }
            let planned = try checker.plan(checked.release, state: state, scope: .model(model), context: planContext())
            lastPlan = planned.plan
            guard planned.plan.policies[name] != nil else { throw ClientError.unknownModel(url: url, model: name) }
            if let choice = planned.plan.variants[name], choice.chosen == nil, modelsDirectory.installed(model) == nil {
                throw ClientError.noVariantForDevice(model: name, reasons: choice.skipped.map { "\($0.variant): \($0.reasons.joined(separator: ", "))" })
            }
            switch planned.plan.waiting[name] {
            case .licence(let spdx, let url)?: throw ClientError.licenceNotAccepted(model: name, spdx: spdx, url: url)
            case let reason?: throw ClientError.conditionsNotMet(model: name, reason: reason.description)
            case nil: break
            }
            _ = try await apply(planned, manifest: checked, scope: .model(model))
            guard let installed = modelsDirectory.installed(model) else { throw ClientError.notInstalled(model: name) }
            return installed
        }
    }

    /// What this call's plan depends on besides the manifest and the disk.
    private func planContext() -> PlanContext {
        PlanContext(conditions: conditions, licences: licences.load(), inUse: Set(inUse.keys), lastUse: lastUse.load())
    }

    /// Runs `body` after every call that came before it has finished, holding the
    /// directory's lock (`DirectoryLock`): another process, or another updater on the same
    /// directory, waits for it, and `body` reads the state only once the lock is taken.
    private func exclusively<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        if busy {
            await withCheckedContinuation { waiting.append($0) }
        } else {
            busy = true
        }
        defer {
            if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
        }
        try Task.checkCancellation()
        let lock = try await DirectoryLock.acquire(configuration.directory, timeout: configuration.directoryLockTimeout)
        defer { lock.release() }
        return try await body()
    }

    private func performUpdate(_ scope: UpdateScope) async throws -> UpdateOutcome {
        var state = stateFile.load()
        lastPlan = nil
        guard let checked = try await checker.acceptedManifest(&state, scope: scope) else { return .notModified }
        let planned = try checker.plan(checked.release, state: state, scope: scope, context: planContext())
        lastPlan = planned.plan
        if planned.plan.bytesToDownload > 0, let shouldDownload = configuration.shouldDownload {
            let goAhead = await shouldDownload(planned.plan)
            try Task.checkCancellation()
            guard goAhead else {
                lastDownloads = []
                return .deferred(planned.plan)
            }
        }
        return try await apply(planned, manifest: checked, scope: scope)
    }

    /// Downloads and proves what `planned` installs, builds the versions, switches the
    /// links and saves the state, then tidies up.
    private func apply(_ planned: Planned, manifest: CheckedManifest, scope: UpdateScope) async throws -> UpdateOutcome {
        let url = configuration.manifestURL.absoluteString
        let release = manifest.release
        // Everything is downloaded and proven before anything is installed; with a pinned
        // model-signing key, each version's signature first, its files once staged.
        // The storage budget, the install cap and the free space are judged before any request.
        if let overBudget = planned.overBudget { throw overBudget }
        try downloads.checkInstallCap(planned.installs)
        let pending = try downloads.pending(planned.installs)
        let statements = try await downloads.modelSignatureStatements(planned.installs)
        let (proven, indexes): ([SHA256Hex: URL], [SHA256Hex: Data])
        do {
            var reports: [FileDownload] = []
            defer { lastDownloads = reports }
            (proven, indexes) = try await downloads.fetch(pending, unmeteredOnly: planned.unmeteredOnly, reports: &reports)
        }
        try downloads.checkRoom(planned.installs, downloads: proven)
        var built: [ModelName: URL] = [:]
        for model in planned.installs {
            let verify = statements[model.name].map { statement in
                { (version: URL) throws in try ModelSignatureCheck.compare(statement, model: model, version: version) }
            }
            built[model.name] = try installer.build(model, downloads: proven, indexes: indexes, manifestURL: url, sequence: release.sequence,
                                                    verify: verify)
        }
        for model in planned.covered where built[model.name] == nil {
            if let current = modelsDirectory.current(model.name), current.lastPathComponent == ModelsDirectory.versionID(model) {
                try installer.label(current, variant: model.variant)
            }
        }
        try Task.checkCancellation()
        // `reportUnusable` may have switched a model while this update waited on the
        // network: the state is read again, and a version refused since is not installed.
        var state = stateFile.load()
        let installs = planned.installs.filter { model in
            let id = ModelsDirectory.versionID(model)
            return state.refused[model.name.rawValue]?.id != id && modelsDirectory.current(model.name)?.lastPathComponent != id
        }
        let changed = try switcher.switchModels(installs, built: built, state: &state) { state in
            state.sequences[url] = max(state.sequences[url] ?? release.sequence, release.sequence)
            // A model left waiting is not done: the next update fetches the manifest whole
            // (no ETag), so a licence accepted or a condition met since installs it.
            if case .policy(let policy) = scope, planned.plan.waiting.isEmpty {
                state.etags[url] = manifest.etag
                state.trusted[url] = ClientState.Trusted(expiresAt: manifest.expiresAt)
                state.coverage[url] = ClientState.Coverage(policy: policy, context: checker.coverageContext)
            } else if !planned.plan.waiting.isEmpty {
                state.etags[url] = nil
            }
            // A refusal holds until the manifest names another version of the model.
            for model in planned.covered where state.refused[model.name.rawValue].map({ $0.id != ModelsDirectory.versionID(model) }) ?? false {
                state.refused[model.name.rawValue] = nil
            }
        }
        try switcher.tidy(release, planned: planned, scope: scope, state: &state)
        return changed.isEmpty ? .upToDate(sequence: release.sequence) : .updated(sequence: release.sequence, models: changed)
    }
}
