import Foundation
// The API names the format's types (`DeviceProfile`, `DownloadPolicy`, `VariantChoice`,
// `CheckedModel`): an app that imports ModelCastClient sees them without a second import.
@_exported import ModelCastFormat
#if canImport(FoundationNetworking)
// `URLSessionConfiguration` is part of the API (`sessionConfiguration:`); on Linux it lives here.
@_exported import FoundationNetworking
#endif

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
    nonisolated let installer: Installer
    /// What is installed, read from the disk (`installer.modelsDirectory`).
    nonisolated let modelsDirectory: ModelsDirectory
    nonisolated let downloader: Downloader
    let statePath: URL
    /// One session for every request of this updater (connections are reused).
    let http: HTTPStream
    /// What the last `update()` or `request(_:)` downloaded, file by file (empty when it downloaded nothing).
    public private(set) var lastDownloads: [FileDownload] = []
    /// True while an update or a check runs; the calls that wait for it, in order.
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// `sessionConfiguration`: the app's own `URLSessionConfiguration` (e.g. with
    /// `allowsCellularAccess = false` or `allowsConstrainedNetworkAccess = false`); the
    /// client copies it and turns its cache off. Default: an ephemeral session.
    public init(_ configuration: ClientConfiguration, sessionConfiguration: URLSessionConfiguration? = nil) throws {
        try configuration.validate()
        self.configuration = configuration
        let downloads = configuration.directory.appendingPathComponent("downloads")
        // Created now, at launch (before anything that would need undoing if it is refused):
        // a relaunched app is handed the session's finished transfers once the session exists.
        let background = try configuration.backgroundDownloads.flatMap { $0.hasSession ? $0 : nil }.map { settings in
            (session: try BackgroundSession.session(settings, downloads: downloads, timeout: configuration.requestTimeout, base: sessionConfiguration),
             minimumFileSize: settings.minimumFileSize)
        }
        installer = Installer(directory: configuration.directory.appendingPathComponent("models"))
        modelsDirectory = installer.modelsDirectory
        http = HTTPStream(timeout: configuration.requestTimeout, bounds: TransferBounds(configuration), base: sessionConfiguration)
        downloader = Downloader(directory: downloads, retries: configuration.retries, http: http, background: background)
        statePath = configuration.directory.appendingPathComponent("state.json")
        (progress, progressContinuation) = AsyncStream.makeStream(of: UpdateProgress.self, bufferingPolicy: .bufferingNewest(64))
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
        guard let name = try? ModelName(name) else { return nil }
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
            let state = loadState()
            guard let checked = try await acceptedManifest(state, scope: .policy(policy)) else { return nil }
            return try plan(checked.release, state: state, scope: .policy(policy)).plan
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
        guard let model = try? ModelName(name) else { throw ClientError.unknownModel(url: url, model: name) }
        if let wanted = configuration.models, !wanted.contains(name) {
            throw ClientError.configuration(reason: "models does not name \(quotedValue(name)), so it cannot be requested")
        }
        return try await exclusively {
            let state = loadState()
            // No If-None-Match is sent: only a broken server answers 304.
            guard let checked = try await acceptedManifest(state, scope: .model(model)) else { throw ClientError.http(url: url, status: 304) }
            let planned = try plan(checked.release, state: state, scope: .model(model))
            guard planned.plan.policies[name] != nil else { throw ClientError.unknownModel(url: url, model: name) }
            if let choice = planned.plan.variants[name], choice.chosen == nil, modelsDirectory.installed(model) == nil {
                throw ClientError.noVariantForDevice(model: name, reasons: choice.skipped.map { "\($0.variant): \($0.reasons.joined(separator: ", "))" })
            }
            _ = try await apply(planned, manifest: checked, scope: .model(model))
            guard let installed = modelsDirectory.installed(model) else { throw ClientError.notInstalled(model: name) }
            return installed
        }
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
        let state = loadState()
        guard let checked = try await acceptedManifest(state, scope: scope) else { return .notModified }
        let planned = try plan(checked.release, state: state, scope: scope)
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
        try checkInstallCap(planned.installs)
        let statements = try await modelSignatureStatements(planned.installs)
        let (downloads, indexes) = try await download(planned.installs)
        try checkRoom(planned.installs, downloads: downloads)
        var built: [ModelName: URL] = [:]
        for model in planned.installs {
            let verify = statements[model.name].map { statement in
                { (version: URL) throws in try ModelSignatureCheck.compare(statement, model: model, version: version) }
            }
            built[model.name] = try installer.build(model, downloads: downloads, indexes: indexes, manifestURL: url, sequence: release.sequence,
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
        var state = loadState()
        let installs = planned.installs.filter { model in
            let id = ModelsDirectory.versionID(model)
            return state.refused[model.name.rawValue]?.id != id && modelsDirectory.current(model.name)?.lastPathComponent != id
        }
        let changed = try switchModels(installs, built: built, state: &state) { state in
            state.sequences[url] = max(state.sequences[url] ?? release.sequence, release.sequence)
            if case .policy(let policy) = scope {
                state.etags[url] = manifest.etag
                state.trusted[url] = ClientState.Trusted(expiresAt: manifest.expiresAt)
                state.coverage[url] = ClientState.Coverage(policy: policy, context: coverageContext)
            }
            // A refusal holds until the manifest names another version of the model.
            for model in planned.covered where state.refused[model.name.rawValue].map({ $0.id != ModelsDirectory.versionID(model) }) ?? false {
                state.refused[model.name.rawValue] = nil
            }
        }
        try tidy(release, planned: planned, scope: scope, state: &state)
        return changed.isEmpty ? .upToDate(sequence: release.sequence) : .updated(sequence: release.sequence, models: changed)
    }

    /// The switch: every model's link, then the state (completed by `finish`). If any step
    /// fails, the links already switched go back, so a failed update leaves every model as
    /// it was. Nothing here awaits: a cancellation cannot land half-way. Returns the
    /// models switched, name → version.
    private func switchModels(_ models: [CheckedModel], built: [ModelName: URL], state: inout ClientState,
                              finish: (inout ClientState) -> Void) throws -> [String: String] {
        var changed: [String: String] = [:]
        var switched: [(name: ModelName, previous: URL?)] = []
        let before = state
        do {
            for model in models {
                let previous = modelsDirectory.current(model.name)
                try installer.activate(model.name, version: built[model.name]!)
                switched.append((model.name, previous))
                let id = ModelsDirectory.versionID(model)
                var history = previous.map { [$0.lastPathComponent] } ?? []
                history += state.installed[model.name.rawValue]?.previous ?? []
                history.removeAll { $0 == id }
                state.installed[model.name.rawValue] = ClientState.Installed(
                    version: model.version.rawValue, id: id, previous: Array(Self.unique(history).prefix(configuration.keepPreviousVersions)))
                changed[model.name.rawValue] = model.version.rawValue
            }
            finish(&state)
            try state.save(statePath)
        } catch {
            var notUndone: [String] = []
            for (name, previous) in switched.reversed() {
                do {
                    if let previous { try installer.activate(name, version: previous) } else { try FileManager.default.removeItem(at: modelsDirectory.currentLink(name)) }
                } catch {
                    notUndone.append(name.rawValue)
                }
            }
            do { try before.save(statePath) } catch { notUndone.append("state.json") }
            if !notUndone.isEmpty { throw ClientError.undoFailed(cause: (error as? LocalizedError)?.errorDescription ?? String(describing: error), models: notUndone) }
            throw error
        }
        return changed
    }

    /// Once the new state is saved: models the manifest no longer names go (by an update,
    /// not a request), then older versions of the models the call covered, then the
    /// downloads, except those of models left for a later call (to be resumed).
    private func tidy(_ release: Release, planned: Planned, scope: UpdateScope, state: inout ClientState) throws {
        if case .policy = scope {
            let named = Set(release.models.keys).union(release.rollback?.models.keys.map { $0 } ?? [])
            for installed in modelsDirectory.installedModels() where !named.contains(installed.name) {
                guard let name = try? ModelName(installed.name) else { continue }
                installer.remove(name)
                state.installed[installed.name] = nil
                state.refused[installed.name] = nil
            }
        }
        for name in planned.pruned {
            guard let record = state.installed[name.rawValue] else { continue }
            installer.prune(name, keep: Set([record.id] + record.previous))
        }
        try state.save(statePath)
        downloader.removeAll(keeping: planned.later)
    }

    /// The state as saved, or, when `state.json` is missing its installs or unreadable,
    /// rebuilt from the disk: the `current` links and the records of the versions present
    /// (the highest sequence they were installed from is kept, so replays stay refused).
    func loadState() -> ClientState {
        var state = (try? ClientState.load(statePath)) ?? ClientState()
        let url = configuration.manifestURL.absoluteString
        for model in modelsDirectory.installedModels() where state.installed[model.name]?.id != model.directory.lastPathComponent {
            guard let name = try? ModelName(model.name) else { continue }
            let others = modelsDirectory.versions(name).filter { $0 != model.directory.lastPathComponent }
            state.installed[model.name] = ClientState.Installed(version: model.version, id: model.directory.lastPathComponent,
                                                                previous: Array(others.prefix(configuration.keepPreviousVersions)))
            if let record = ModelsDirectory.record(in: model.directory), record.manifestURL == url, record.sequence > state.sequences[url] ?? -1 {
                state.sequences[url] = record.sequence
            }
            state.etags[url] = nil  // the next check fetches the manifest whole
        }
        return state
    }

    /// The manifest, fetched and proven, when it is new; its sequence must not be below
    /// the highest this device accepted from this URL. An update asks for it conditionally
    /// (`If-None-Match`) when the last accepted one was applied in full for at least the
    /// models this call covers, and is still fresh; a request always fetches it whole.
    /// nil for a 304 to a conditional GET.
    private func acceptedManifest(_ state: ClientState, scope: UpdateScope) async throws -> CheckedManifest? {
        let url = configuration.manifestURL.absoluteString
        let fetcher = ManifestFetcher(configuration: configuration, http: http)
        // The conditional GET is only safe while every model is installed as recorded.
        let complete = state.installed.allSatisfy { name, record in
            (try? ModelName(name)).flatMap { modelsDirectory.current($0)?.lastPathComponent } == record.id
        }
        // A 304 would keep the device on the manifest it trusts: once that one has expired,
        // the manifest is fetched whole and judged as a fresh device judges it.
        let trusted = state.trusted[url]
        let fresh = trusted.map { trusted in trusted.expiresAt.map { (try? fetcher.checkFresh($0)) != nil } ?? true } ?? false
        var etag: String?
        if case .policy(let policy) = scope, complete, fresh, let coverage = state.coverage[url], coverage.context == coverageContext, policy <= coverage.policy {
            etag = state.etags[url]
        }
        guard let checked = try await fetcher.fetch(ifNoneMatch: etag) else {
            // "Not modified" stands for the manifest asked about, and only while it is
            // fresh (the clock is read again: it may have expired during the request).
            if let expiresAt = trusted?.expiresAt { try fetcher.checkFresh(expiresAt) }
            guard etag != nil else { throw ClientError.http(url: url, status: 304) }
            return nil
        }
        let release = checked.release
        if let highest = state.sequences[url], release.sequence < highest {
            throw ClientError.replayed(url: url, sequence: release.sequence, highestAccepted: highest)
        }
        // Both were parsed already (the manifest by its decoding, the app's by the configuration's validation).
        if let minimum = release.minAppVersion, let app = configuration.appVersion,
           let required = try? AppVersion(minimum), let current = try? AppVersion(app), current < required {
            throw ClientError.requiresNewerApp(minimum: minimum, current: app)
        }
        return checked
    }

    /// Downloads every file of `models` not already kept, after checking the free space;
    /// returns the proven files and the segment indexes fetched (kept with the install,
    /// to seed the next update), both by the file's SHA-256.
    private func download(_ models: [CheckedModel]) async throws -> ([SHA256Hex: URL], [SHA256Hex: Data]) {
        var files: [SHA256Hex: (file: CheckedFile, model: CheckedModel)] = [:]
        for model in models where modelsDirectory.kept(model) == nil {
            for file in model.files { files[file.sha256] = (file, model) }
        }
        var total: Int64 = 0, onDisk: Int64 = 0, zipped: Int64 = 0
        for (file, _) in files.values {
            total = try add(total, file.size)
            onDisk = try add(onDisk, downloader.bytesOnDisk(file))
            if file.packedDirectoryName != nil { zipped = try add(zipped, file.size) }
        }
        // What is left to download, and a zip's unpacked copy (at least about its own size;
        // its exact size is checked before it is unpacked). A plain or tree file is installed
        // as a second link to its download: no second copy.
        try checkFreeSpace(needed: try add(total - onDisk, zipped))
        var proven: [SHA256Hex: URL] = [:]
        var indexes: [SHA256Hex: Data] = [:]
        let done = Counter(onDisk)
        let grandTotal = total
        let delta = DeltaDownload(http: http, downloads: downloader.directory)
        var reports: [FileDownload] = []
        defer { lastDownloads = reports }
        for (file, model) in files.values.sorted(by: { $0.file.sha256.rawValue < $1.file.sha256.rawValue }) {
            let before = downloader.bytesOnDisk(file)
            let continuation = progressContinuation
            let name = file.name.rawValue
            // A file with a segment index: its index is kept with the install; the
            // installed version's copy of it (under this name or another) seeds the download.
            let fetchedIndex = try await delta.indexIfServed(of: file, model: model.name)
            if let fetchedIndex { indexes[file.sha256] = fetchedIndex.bytes }
            if let fetchedIndex, before == 0, let seed = installer.seed(for: file, of: model, index: fetchedIndex.index),
               let built = try await delta.build(file, index: fetchedIndex.index, seed: seed) {
                proven[file.sha256] = built.url
                reports.append(FileDownload(model: model.name.rawValue, file: name, size: file.size, fetchedBytes: built.fetched,
                                            seededFrom: built.whole ? nil : seed.version, rangeRequests: built.whole ? nil : built.requests))
                continuation.yield(UpdateProgress(file: name, completedBytes: done.value + file.size, totalBytes: grandTotal))
            } else {
                proven[file.sha256] = try await downloader.fetch(file, model: model.name) { written in
                    continuation.yield(UpdateProgress(file: name, completedBytes: done.value + written - before, totalBytes: grandTotal))
                }
                reports.append(FileDownload(model: model.name.rawValue, file: name, size: file.size, fetchedBytes: file.size - before,
                                            seededFrom: nil, rangeRequests: nil,
                                            transfer: downloader.usesDownloadTask(file) ? .downloadTask : .stream))
            }
            done.add(file.size - before)
        }
        return (proven, indexes)
    }

    /// `a + b`, refusing a total past what 64 bits hold (a manifest's sizes are each at
    /// most 2^53, but thousands of them could add up past it).
    func add(_ a: Int64, _ b: Int64) throws -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        guard !overflow else {
            throw ClientError.invalidManifest(url: configuration.manifestURL.absoluteString, reason: "the sizes of its files add up to more than 2^63 bytes")
        }
        return sum
    }

    private static func unique(_ ids: [String]) -> [String] {
        var seen = Set<String>()
        return ids.filter { seen.insert($0).inserted }
    }

    /// Refuses a download that would leave less than `Installer.reservedSpace` free. With
    /// nothing to write (a rollback to a kept version) there is nothing to refuse: the
    /// reserve guards what an update adds, not what a full volume already holds.
    private func checkFreeSpace(needed: Int64) throws {
        guard needed > 0, let free = freeSpace(at: configuration.directory) else { return }
        let withReserve = Installer.add(needed, Installer.reservedSpace)
        if withReserve > free { throw ClientError.insufficientDiskSpace(needed: withReserve, available: free) }
    }
}

/// A running total (updated from one download at a time).
private final class Counter: @unchecked Sendable {
    private(set) var value: Int64
    init(_ value: Int64) { self.value = value }
    func add(_ amount: Int64) { value += amount }
}
