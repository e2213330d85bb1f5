import Foundation
import ModelCastFormat

/// What an update did.
public enum UpdateOutcome: Sendable, Equatable {
    /// The server said the manifest had not changed (HTTP 304).
    case notModified
    /// The manifest was accepted; the installed models already were the ones it names.
    case upToDate(sequence: Int64)
    /// The models whose installed version changed, by name (a rollback included).
    case updated(sequence: Int64, models: [String: String])
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
/// and obeys rollbacks and staged rollouts. One instance per manifest (channel); calls
/// run one at a time.
///
///     let updater = try ModelUpdater(configuration)
///     let outcome = try await updater.update()
///     let model = updater.installed("tiny-llm")?.mainFile
public actor ModelUpdater {
    public nonisolated let configuration: ClientConfiguration
    /// Download progress of the update under way (bytes on disk of the whole update).
    public nonisolated let progress: AsyncStream<UpdateProgress>
    private let progressContinuation: AsyncStream<UpdateProgress>.Continuation
    private let installer: Installer
    private let downloader: Downloader
    private let statePath: URL
    /// One session for every request of this updater (connections are reused).
    private let http: HTTPStream

    public init(_ configuration: ClientConfiguration) throws {
        self.configuration = configuration
        installer = Installer(directory: configuration.directory.appendingPathComponent("models"))
        http = HTTPStream(timeout: configuration.requestTimeout)
        downloader = Downloader(directory: configuration.directory.appendingPathComponent("downloads"), retries: configuration.retries, http: http)
        statePath = configuration.directory.appendingPathComponent("state.json")
        (progress, progressContinuation) = AsyncStream.makeStream(of: UpdateProgress.self, bufferingPolicy: .bufferingNewest(64))
        do {
            try FileManager.default.createDirectory(at: configuration.directory, withIntermediateDirectories: true)
        } catch {
            throw ClientError.io(path: configuration.directory.path, reason: String(describing: error))
        }
    }

    deinit {
        http.invalidate()
        progressContinuation.finish()
    }

    /// The version of `name` in use, if one is installed.
    public nonisolated func installed(_ name: String) -> InstalledModel? {
        let installer = Installer(directory: configuration.directory.appendingPathComponent("models"))
        guard let directory = installer.current(name),
              let state = try? ClientState.load(configuration.directory.appendingPathComponent("state.json")),
              let record = state.installed[name], record.id == directory.lastPathComponent else { return nil }
        return InstalledModel(name: name, version: record.version, directory: directory, mainFile: directory.appendingPathComponent(record.mainFile))
    }

    /// Fetches and proves the manifest and says what this device should run, without
    /// downloading anything. nil when the manifest has not changed since the last update.
    public func check() async throws -> UpdatePlan? {
        var state = try ClientState.load(statePath)
        guard let (release, _) = try await acceptedManifest(&state) else { return nil }
        let (takesCandidate, models) = chosenModels(release)
        var bytes: Int64 = 0
        for (name, model) in models where installer.kept(name, model) == nil {
            for file in model.files { bytes += file.size - downloader.bytesOnDisk(file) }
        }
        return UpdatePlan(sequence: release.sequence, takesCandidate: takesCandidate, versions: models.mapValues(\.version), bytesToDownload: bytes)
    }

    /// Checks the manifest and, when it names other models than those installed, downloads,
    /// proves and installs them. A failure leaves every installed model as it was.
    public func update() async throws -> UpdateOutcome {
        var state = try ClientState.load(statePath)
        guard let (release, etag) = try await acceptedManifest(&state) else { return .notModified }
        let (_, models) = chosenModels(release)
        let url = configuration.manifestURL.absoluteString
        var changed: [String: String] = [:]
        // Everything is downloaded and proven before anything is installed.
        let wanted = models.filter { name, model in state.installed[name]?.id != Installer.versionID(model) || installer.current(name) == nil }
        let downloads = try await download(wanted)
        var built: [String: URL] = [:]
        for (name, model) in wanted.sorted(by: { $0.key < $1.key }) {
            built[name] = try installer.build(name, model, downloads: downloads)
        }
        // The switch: every model's link, then the state. If any step fails, the links
        // already switched go back, so a failed update leaves every model as it was.
        var switched: [(name: String, previous: URL?)] = []
        let before = state
        do {
            for (name, model) in wanted.sorted(by: { $0.key < $1.key }) {
                let previous = installer.current(name)
                try installer.activate(name, version: built[name]!)
                switched.append((name, previous))
                var history = state.installed[name].map { [$0.id] + $0.previous } ?? []
                history.removeAll { $0 == Installer.versionID(model) }
                state.installed[name] = ClientState.Installed(
                    version: model.version, id: Installer.versionID(model), mainFile: Self.mainFile(model),
                    previous: Array(history.prefix(configuration.keepPreviousVersions)))
                changed[name] = model.version
            }
            state.sequences[url] = release.sequence
            state.etags[url] = etag
            try state.save(statePath)
        } catch {
            for (name, previous) in switched.reversed() {
                if let previous { try? installer.activate(name, version: previous) } else { try? FileManager.default.removeItem(at: installer.currentLink(name)) }
            }
            try? before.save(statePath)
            throw error
        }
        // Older versions and finished downloads go only once the new state is saved.
        for name in Set(wanted.keys).union(state.installed.keys) {
            guard let record = state.installed[name] else { continue }
            installer.prune(name, keep: Set([record.id] + record.previous))
        }
        downloader.removeAll()
        return changed.isEmpty ? .upToDate(sequence: release.sequence) : .updated(sequence: release.sequence, models: changed)
    }

    /// The manifest, fetched conditionally and proven, when it is new; its sequence must
    /// not be below the highest this device accepted from this URL.
    private func acceptedManifest(_ state: inout ClientState) async throws -> (Release, String?)? {
        let url = configuration.manifestURL.absoluteString
        let fetcher = ManifestFetcher(configuration: configuration, http: http)
        // The conditional GET is only safe while every model is installed as recorded.
        let complete = state.installed.keys.allSatisfy { installer.current($0) != nil }
        guard let checked = try await fetcher.fetch(ifNoneMatch: complete ? state.etags[url] : nil) else { return nil }
        let release = checked.release
        if let highest = state.sequences[url], release.sequence < highest {
            throw ClientError.replayed(url: url, sequence: release.sequence, highestAccepted: highest)
        }
        if let minimum = release.minAppVersion, let app = configuration.appVersion,
           let required = SemanticVersion(minimum), let current = SemanticVersion(app), current < required {
            throw ClientError.requiresNewerApp(minimum: minimum, current: app)
        }
        return (release, checked.etag)
    }

    /// The rollout's choice for this device: the candidate (`models`) or the fallback
    /// (`rollback.models`), by the cohort rule `Rollout` implements; filtered by `models`.
    private func chosenModels(_ release: Release) -> (Bool, [String: ReleaseModel]) {
        let candidate = release.rollout.map { $0.selects(deviceID: configuration.deviceID, at: configuration.now()) } ?? true
        var models = candidate ? release.models : (release.rollback?.models ?? release.models)
        if let wanted = configuration.models { models = models.filter { wanted.contains($0.key) } }
        return (candidate, models)
    }

    /// Downloads every file of `models` not already kept, after checking the free space.
    private func download(_ models: [String: ReleaseModel]) async throws -> [String: URL] {
        var files: [String: ReleaseFile] = [:]
        for (name, model) in models where installer.kept(name, model) == nil {
            for file in model.files { files[file.sha256] = file }
        }
        let total = files.values.reduce(Int64(0)) { $0 + $1.size }
        let onDisk = files.values.reduce(Int64(0)) { $0 + downloader.bytesOnDisk($1) }
        try checkFreeSpace(needed: (total - onDisk) + total)  // the download, then the installed copy
        var proven: [String: URL] = [:]
        let done = Counter(onDisk)
        for file in files.values.sorted(by: { $0.sha256 < $1.sha256 }) {
            let before = downloader.bytesOnDisk(file)
            let continuation = progressContinuation
            proven[file.sha256] = try await downloader.fetch(file) { written in
                continuation.yield(UpdateProgress(file: file.name, completedBytes: done.value + written - before, totalBytes: total))
            }
            done.add(file.size - before)
        }
        return proven
    }

    private func checkFreeSpace(needed: Int64) throws {
        guard let attributes = try? FileManager.default.attributesOfFileSystem(forPath: configuration.directory.path),
              let free = (attributes[.systemFreeSize] as? NSNumber)?.int64Value else { return }
        if needed > free { throw ClientError.insufficientDiskSpace(needed: needed, available: free) }
    }

    /// The path of the model itself inside its version directory.
    static func mainFile(_ model: ReleaseModel) -> String {
        if let tree = model.tree { return tree }
        guard let first = model.files.first else { return "" }
        return Installer.packedDirectoryName(first) ?? first.name
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
        /// The model itself, relative to the version directory.
        var mainFile: String
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
            throw ClientError.io(path: path.path, reason: "unreadable state (\(error))")
        }
    }

    /// Written to a temporary file and renamed over the old one.
    func save(_ path: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        do {
            try encoder.encode(self).write(to: path, options: .atomic)
        } catch {
            throw ClientError.io(path: path.path, reason: String(describing: error))
        }
    }
}
