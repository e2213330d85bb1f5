import Foundation
import ModelCastFormat

/// An update's downloads: everything it installs is fetched and proven before anything is
/// installed. With a pinned model-signing key each version's signature comes first
/// (`modelSignatureStatements`); then the files not already kept (`pending`, `fetch`),
/// within the install cap and the free space (`UpdateDownloads+Space.swift`).
struct UpdateDownloads: Sendable {
    let configuration: ClientConfiguration
    let http: HTTPStream
    let installer: Installer
    let downloader: Downloader
    /// Where `ModelUpdater.progress` gets its events.
    let progress: AsyncStream<UpdateProgress>.Continuation

    /// The files an update still has to download, each once, and its bytes.
    struct Pending {
        /// Sorted by SHA-256, each with the model it is fetched for.
        let files: [(file: CheckedFile, model: CheckedModel)]
        /// Bytes of the files, and of those already on the disk (complete or partial).
        let total: Int64
        let onDisk: Int64
    }

    /// With a pinned model-signing key (`ClientConfiguration.modelSigningPublicKey`): the
    /// verified statement of each model version an update is about to switch to, by model
    /// name, fetched before any of the models' files (a refusal costs no model download).
    /// Without a key, none: no bundle is fetched.
    func modelSignatureStatements(_ models: [CheckedModel]) async throws -> [ModelName: ModelSigningStatement] {
        guard let publicKey = configuration.modelSigningPublicKey else { return [:] }
        let check = ModelSignatureCheck(publicKey: publicKey, http: http, retries: configuration.retries)
        var statements: [ModelName: ModelSigningStatement] = [:]
        for model in models {
            statements[model.name] = try await check.statement(for: model)
        }
        return statements
    }

    /// Every file of `models` not already kept, after checking the free space they need:
    /// per model, in order, the bytes it still has to download and what its install adds
    /// (`installAddition`); with `Installer.reservedSpace`, more than the volume has free
    /// is refused naming the model, before any request.
    func pending(_ models: [CheckedModel]) throws -> Pending {
        var files: [SHA256Hex: (file: CheckedFile, model: CheckedModel)] = [:]
        let manifestURL = configuration.manifestURL
        var total: Int64 = 0, onDisk: Int64 = 0, needed: Int64 = 0
        var needs: [(model: CheckedModel, needed: Int64)] = []
        for model in models where installer.modelsDirectory.kept(model) == nil {
            for file in model.files where files[file.sha256] == nil {
                files[file.sha256] = (file, model)
                let present = downloader.bytesOnDisk(file)
                total = try addSizes(total, file.size, of: manifestURL)
                onDisk = try addSizes(onDisk, present, of: manifestURL)
                needed = try addSizes(needed, file.size - present, of: manifestURL)
            }
            needed = try addSizes(needed, Self.installAddition(model), of: manifestURL)
            needs.append((model, needed))
        }
        try checkFreeSpace(needs)
        return Pending(files: files.values.sorted(by: { $0.file.sha256.rawValue < $1.file.sha256.rawValue }), total: total, onDisk: onDisk)
    }

    /// The room a model's install takes beside its downloads. A plain or tree file is
    /// installed as a second link to its download (no second copy); a zip is unpacked: the
    /// manifest's `storage.install_size` less the plain files (publish computes it from the
    /// zip's entries, and may only raise it), else at least about the zip's own size. Its
    /// exact unpacked size is checked again before it is unpacked (`checkRoom`).
    static func installAddition(_ model: CheckedModel) -> Int64 {
        var linked: Int64 = 0, zipped: Int64 = 0
        for file in model.files {
            if file.packedDirectoryName == nil { linked = Installer.add(linked, file.size) } else { zipped = Installer.add(zipped, file.size) }
        }
        guard let storage = model.storage else { return zipped }
        return max(0, storage.installSize - linked)
    }

    /// Downloads the `pending` files; returns the proven files and the segment indexes
    /// fetched (kept with the install, to seed the next update), both by the file's
    /// SHA-256. `reports` gets each file as it is done.
    /// `unmeteredOnly`: the models whose requests stay off metered networks (`UnmeteredOnly`).
    func fetch(_ pending: Pending, unmeteredOnly: Set<ModelName> = [], reports: inout [FileDownload]) async throws -> ([SHA256Hex: URL], [SHA256Hex: Data]) {
        var proven: [SHA256Hex: URL] = [:]
        var indexes: [SHA256Hex: Data] = [:]
        let done = Counter(pending.onDisk)
        let grandTotal = pending.total
        let delta = DeltaDownload(http: http, downloads: downloader.directory)
        for (file, model) in pending.files {
            // Its requests stay off metered networks when its conditions ask it (Apple platforms).
            try await UnmeteredOnly.$active.withValue(unmeteredOnly.contains(model.name)) {
                let before = downloader.bytesOnDisk(file)
                let continuation = progress
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
        }
        return (proven, indexes)
    }

    /// Refuses downloads that would leave less than `Installer.reservedSpace` free:
    /// `needs` are running totals, model by model; the first past the free space is named.
    /// With nothing to write (a rollback to a kept version) there is nothing to refuse: the
    /// reserve guards what an update adds, not what a full volume already holds.
    private func checkFreeSpace(_ needs: [(model: CheckedModel, needed: Int64)]) throws {
        guard let last = needs.last, last.needed > 0, let free = freeSpace(at: configuration.directory) else { return }
        for (model, needed) in needs {
            let withReserve = Installer.add(needed, Installer.reservedSpace)
            if withReserve > free { throw ClientError.insufficientSpace(model: model.name.rawValue, needed: withReserve, free: free) }
        }
    }
}

/// A running total (updated from one download at a time).
// @unchecked: a plain var, safe because the downloads that add to it run one at a time.
private final class Counter: @unchecked Sendable {
    private(set) var value: Int64
    init(_ value: Int64) { self.value = value }
    func add(_ amount: Int64) { value += amount }
}
