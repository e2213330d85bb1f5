import Foundation
import ModelCastFormat
#if canImport(FoundationNetworking)
// `URLSessionConfiguration` is part of the API (`sessionConfiguration:`); on Linux it lives here.
@_exported import FoundationNetworking
#endif

/// What an update did.
public enum UpdateOutcome: Sendable, Equatable {
    /// The server said the manifest had not changed (HTTP 304).
    case notModified
    /// The manifest was accepted; the installed models already were the ones it names.
    case upToDate(sequence: Int64)
    /// The models whose installed version changed, by name (a rollback included).
    case updated(sequence: Int64, models: [String: String])
}

/// How one file of an update was downloaded.
public struct FileDownload: Sendable, Equatable {
    public let model: String
    /// The file's name in the manifest.
    public let file: String
    /// The file's size.
    public let size: Int64
    /// Bytes received for it in this update (a resumed download counts only the rest).
    public let fetchedBytes: Int64
    /// The installed version whose file seeded a segmented download; nil for a plain download.
    public let seededFrom: String?
    /// The range requests of a segmented download (repairs included); nil for a plain download.
    public let rangeRequests: Int?
}

/// What the manifest asks of this device, before anything is downloaded.
public struct UpdatePlan: Sendable, Equatable {
    public let sequence: Int64
    /// True when a staged rollout put this device in the candidate's cohort (or there is no rollout).
    public let takesCandidate: Bool
    /// Model name → the version this device should run.
    public let versions: [String: String]
    /// Bytes still to download for them (kept versions and finished downloads excluded).
    public let bytesToDownload: Int64
}

/// The app side of modelcast: checks the manifest, downloads, proves and installs models,
/// and obeys rollbacks and staged rollouts. One instance per manifest (channel).
///
///     let updater = try ModelUpdater(configuration)
///     let outcome = try await updater.update()
///     let model = updater.installed("tiny-llm")?.mainFile
///
/// Its contract:
/// - No manifest, signed or not, makes it read, write or delete outside
///   `configuration.directory`: every value is parsed (`ModelCastFormat`'s types) before
///   anything touches the disk, and paths are built from the parsed values only.
/// - `update()` and `check()` run one at a time: a second call waits for the first.
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
    private nonisolated let installer: Installer
    private let downloader: Downloader
    private let statePath: URL
    /// One session for every request of this updater (connections are reused).
    private let http: HTTPStream
    /// What the last `update()` downloaded, file by file (empty when it downloaded nothing).
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
        installer = Installer(directory: configuration.directory.appendingPathComponent("models"))
        http = HTTPStream(timeout: configuration.requestTimeout, base: sessionConfiguration)
        downloader = Downloader(directory: configuration.directory.appendingPathComponent("downloads"), retries: configuration.retries, http: http)
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
        return installer.installed(name)
    }

    /// Every model installed, by name. Reads the disk only.
    public nonisolated func installedModels() -> [InstalledModel] {
        installer.installedModels()
    }

    /// Fetches and proves the manifest and says what this device should run, without
    /// downloading anything. nil when the manifest has not changed since the last update.
    public func check() async throws -> UpdatePlan? {
        try await exclusively {
            var state = loadState()
            guard let (release, _) = try await acceptedManifest(&state) else { return nil }
            let (takesCandidate, models) = try chosenModels(release)
            var bytes: Int64 = 0
            for model in models where installer.kept(model) == nil {
                for file in model.files { bytes = try add(bytes, file.size - downloader.bytesOnDisk(file)) }
            }
            return UpdatePlan(sequence: release.sequence, takesCandidate: takesCandidate,
                              versions: Dictionary(uniqueKeysWithValues: models.map { ($0.name.rawValue, $0.version.rawValue) }), bytesToDownload: bytes)
        }
    }

    /// Checks the manifest and, when it names other models than those installed, downloads,
    /// proves and installs them. A failure leaves every installed model as it was.
    public func update() async throws -> UpdateOutcome {
        try await exclusively { try await performUpdate() }
    }

    /// Runs `body` after every call that came before it has finished.
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
        return try await body()
    }

    private func performUpdate() async throws -> UpdateOutcome {
        var state = loadState()
        guard let (release, etag) = try await acceptedManifest(&state) else { return .notModified }
        let (_, models) = try chosenModels(release)
        let url = configuration.manifestURL.absoluteString
        var changed: [String: String] = [:]
        // Everything is downloaded and proven before anything is installed.
        let wanted = models.filter { installer.current($0.name)?.lastPathComponent != Installer.versionID($0) }
        let (downloads, indexes) = try await download(wanted)
        var built: [ModelName: URL] = [:]
        for model in wanted {
            built[model.name] = try installer.build(model, downloads: downloads, indexes: indexes, manifestURL: url, sequence: release.sequence)
        }
        try Task.checkCancellation()
        // The switch: every model's link, then the state. If any step fails, the links
        // already switched go back, so a failed update leaves every model as it was.
        // Nothing below awaits: a cancellation cannot land half-way.
        var switched: [(name: ModelName, previous: URL?)] = []
        let before = state
        do {
            for model in wanted {
                let previous = installer.current(model.name)
                try installer.activate(model.name, version: built[model.name]!)
                switched.append((model.name, previous))
                let id = Installer.versionID(model)
                var history = previous.map { [$0.lastPathComponent] } ?? []
                history += state.installed[model.name.rawValue]?.previous ?? []
                history.removeAll { $0 == id }
                state.installed[model.name.rawValue] = ClientState.Installed(
                    version: model.version.rawValue, id: id, previous: Array(Self.unique(history).prefix(configuration.keepPreviousVersions)))
                changed[model.name.rawValue] = model.version.rawValue
            }
            state.sequences[url] = release.sequence
            state.etags[url] = etag
            try state.save(statePath)
        } catch {
            var notUndone: [String] = []
            for (name, previous) in switched.reversed() {
                do {
                    if let previous { try installer.activate(name, version: previous) } else { try FileManager.default.removeItem(at: installer.currentLink(name)) }
                } catch {
                    notUndone.append(name.rawValue)
                }
            }
            do { try before.save(statePath) } catch { notUndone.append("state.json") }
            if !notUndone.isEmpty { throw ClientError.undoFailed(cause: (error as? LocalizedError)?.errorDescription ?? String(describing: error), models: notUndone) }
            throw error
        }
        // Older versions, models the manifest no longer names, and finished downloads go
        // only once the new state is saved.
        let named = Set(release.models.keys).union(release.rollback?.models.keys.map { $0 } ?? [])
        for installed in installer.installedModels() where !named.contains(installed.name) {
            guard let name = try? ModelName(installed.name) else { continue }
            installer.remove(name)
            state.installed[installed.name] = nil
        }
        for model in models {
            guard let record = state.installed[model.name.rawValue] else { continue }
            installer.prune(model.name, keep: Set([record.id] + record.previous))
        }
        try state.save(statePath)
        downloader.removeAll()
        return changed.isEmpty ? .upToDate(sequence: release.sequence) : .updated(sequence: release.sequence, models: changed)
    }

    /// The state as saved, or, when `state.json` is missing its installs or unreadable,
    /// rebuilt from the disk: the `current` links and the records of the versions present
    /// (the highest sequence they were installed from is kept, so replays stay refused).
    private func loadState() -> ClientState {
        var state = (try? ClientState.load(statePath)) ?? ClientState()
        let url = configuration.manifestURL.absoluteString
        for model in installer.installedModels() where state.installed[model.name]?.id != model.directory.lastPathComponent {
            guard let name = try? ModelName(model.name) else { continue }
            let others = installer.versions(name).filter { $0 != model.directory.lastPathComponent }
            state.installed[model.name] = ClientState.Installed(version: model.version, id: model.directory.lastPathComponent,
                                                                previous: Array(others.prefix(configuration.keepPreviousVersions)))
            if let record = Installer.record(in: model.directory), record.manifestURL == url, record.sequence > state.sequences[url] ?? -1 {
                state.sequences[url] = record.sequence
            }
            state.etags[url] = nil  // the next check fetches the manifest whole
        }
        return state
    }

    /// The manifest, fetched conditionally and proven, when it is new; its sequence must
    /// not be below the highest this device accepted from this URL.
    private func acceptedManifest(_ state: inout ClientState) async throws -> (Release, String?)? {
        let url = configuration.manifestURL.absoluteString
        let fetcher = ManifestFetcher(configuration: configuration, http: http)
        // The conditional GET is only safe while every model is installed as recorded.
        let complete = state.installed.allSatisfy { name, record in
            (try? ModelName(name)).flatMap { installer.current($0)?.lastPathComponent } == record.id
        }
        guard let checked = try await fetcher.fetch(ifNoneMatch: complete ? state.etags[url] : nil) else { return nil }
        let release = checked.release
        if let highest = state.sequences[url], release.sequence < highest {
            throw ClientError.replayed(url: url, sequence: release.sequence, highestAccepted: highest)
        }
        // Both were parsed already (the manifest by its decoding, the app's by the configuration's validation).
        if let minimum = release.minAppVersion, let app = configuration.appVersion,
           let required = try? AppVersion(minimum), let current = try? AppVersion(app), current < required {
            throw ClientError.requiresNewerApp(minimum: minimum, current: app)
        }
        return (release, checked.etag)
    }

    /// The rollout's choice for this device: the candidate (`models`) or the fallback
    /// (`rollback.models`), by the cohort rule `Rollout` implements; filtered by `models`.
    private func chosenModels(_ release: Release) throws -> (Bool, [CheckedModel]) {
        let candidate = release.rollout.map { $0.selects(deviceID: configuration.deviceID, at: configuration.now()) } ?? true
        var models: [CheckedModel]
        do {
            models = candidate || release.rollback == nil ? try release.checkedModels() : try release.checkedRollbackModels()
        } catch {
            throw ClientError.invalidManifest(url: configuration.manifestURL.absoluteString, reason: String(describing: error))
        }
        if let wanted = configuration.models { models = models.filter { wanted.contains($0.name.rawValue) } }
        return (candidate, models)
    }

    /// Downloads every file of `models` not already kept, after checking the free space;
    /// returns the proven files and the segment indexes fetched (kept with the install,
    /// to seed the next update), both by the file's SHA-256.
    private func download(_ models: [CheckedModel]) async throws -> ([SHA256Hex: URL], [SHA256Hex: Data]) {
        var files: [SHA256Hex: (file: CheckedFile, model: CheckedModel)] = [:]
        for model in models where installer.kept(model) == nil {
            for file in model.files { files[file.sha256] = (file, model) }
        }
        var total: Int64 = 0, onDisk: Int64 = 0
        for (file, _) in files.values {
            total = try add(total, file.size)
            onDisk = try add(onDisk, downloader.bytesOnDisk(file))
        }
        try checkFreeSpace(needed: try add(total - onDisk, total))  // the download, then the installed copy
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
            // A file with a segment index: its index is kept with the install; an older
            // installed copy of it seeds the download.
            let fetchedIndex = try? await delta.index(of: file, model: model.name)
            if let fetchedIndex { indexes[file.sha256] = fetchedIndex.bytes }
            if let fetchedIndex, before == 0, let seed = installer.seed(for: file, of: model),
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
                                            seededFrom: nil, rangeRequests: nil))
            }
            done.add(file.size - before)
        }
        return (proven, indexes)
    }

    /// `a + b`, refusing a total past what 64 bits hold (a manifest's sizes are each at
    /// most 2^53, but thousands of them could add up past it).
    private func add(_ a: Int64, _ b: Int64) throws -> Int64 {
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

    private func checkFreeSpace(needed: Int64) throws {
        guard let free = freeSpace(at: configuration.directory) else { return }
        if needed > free { throw ClientError.insufficientDiskSpace(needed: needed, available: free) }
    }
}

/// A running total (updated from one download at a time).
private final class Counter: @unchecked Sendable {
    private(set) var value: Int64
    init(_ value: Int64) { self.value = value }
    func add(_ amount: Int64) { value += amount }
}

/// What the client remembers between launches (`state.json`).
struct ClientState: Codable {
    struct Installed: Codable {
        var version: String
        /// The version directory's name.
        var id: String
        /// Version directories kept for a local rollback, newest first.
        var previous: [String]
    }

    /// The highest sequence accepted, per manifest URL (a channel switch starts a new one).
    var sequences: [String: Int64] = [:]
    /// The ETag of the manifest last accepted, per manifest URL.
    var etags: [String: String] = [:]
    var installed: [String: Installed] = [:]

    static func load(_ path: URL) throws -> ClientState {
        guard let data = FileManager.default.contents(atPath: path.path) else { return ClientState() }
        do { return try JSONDecoder().decode(ClientState.self, from: data) } catch {
            throw ClientError.io(path: path.path, reason: "unreadable state")
        }
    }

    /// Written to a temporary file and renamed over the old one.
    func save(_ path: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        do {
            try encoder.encode(self).write(to: path, options: .atomic)
        } catch {
            throw ClientError.io(path, error)
        }
    }
}
