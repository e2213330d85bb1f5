import Crypto
import Foundation
@_spi(ModelCastTooling) import ModelCastFormat
import ZIPFoundation

/// A model version installed on the device.
public struct InstalledModel: Sendable, Equatable {
    public let name: String
    public let version: String
    /// For a model with variants, the variant installed (`ReleaseVariant.name`); nil for a
    /// model without variants, and for a version installed by a client that did not know them.
    public let variant: String?
    /// The version's directory (`models/NAME/versions/VERSION-…`): the model's files by
    /// their name, a tree model's directory, a zipped directory unpacked.
    public let directory: URL
    /// The model itself, through the `current` link: `models/NAME/current/<file>`. The
    /// path stays the same across updates (the link moves), so an app may keep it.
    /// For a zipped directory it is the unpacked directory; for a tree model, the tree's directory.
    public let mainFile: URL

    /// The version directory's name, `VERSION-<digest of its files>`: the same for the same
    /// files, another for another build of the same version number. An app that derives
    /// something from the model (a compiled Core ML model, a cache) keys it by this.
    public var versionID: String { directory.lastPathComponent }
}

/// What the client writes beside a version's files (`.modelcast-version.json`): where the
/// version came from. `installed()` and a rebuilt state read it, so they need no network
/// and survive a lost `state.json`.
struct VersionRecord: Codable, Equatable {
    var name: String
    var version: String
    /// The model itself, relative to the version directory.
    var mainFile: String
    /// The artifacts' SHA-256, in the manifest's order.
    var artifacts: [String]
    /// The manifest and sequence that installed it.
    var manifestURL: String
    var sequence: Int64
    /// The variant installed, for a model with variants (absent from older records).
    var variant: String?
}

/// Puts proven files in place and switches the model's `current` link with one rename.
///
///     models/NAME/versions/VERSION-<id>/   one directory per installed version
///     models/NAME/current                  a symbolic link to the version in use
///
/// A version directory is built under a temporary name and renamed into place whole,
/// with a record of the artifacts it came from; `current` is replaced by renaming a new
/// link over it. A crash at any point leaves `current` naming a complete version
/// (`ModelsDirectory` reads that layout back). Every path is built from parsed values
/// (`ModelName`, `PathSegment`, `RelativePath`), never from a manifest's strings.
struct Installer: Sendable {
    /// The layout it writes, and what it reads back of it.
    let modelsDirectory: ModelsDirectory
    /// Largest number of entries and unpacked bytes accepted from one zip.
    static let maxZipEntries = 100_000
    static let maxZipBytes: Int64 = 64 << 30

    init(directory: URL) {
        modelsDirectory = ModelsDirectory(directory: directory)
    }

    /// Builds the version directory from the proven downloads (by SHA-256) and returns it.
    /// `verify` is given the complete directory before it is used — the staged one before
    /// its rename into place (a refusal removes it), or the kept one (left as it is).
    func build(_ model: CheckedModel, downloads: [SHA256Hex: URL], indexes: [SHA256Hex: Data] = [:], manifestURL: String, sequence: Int64,
               verify: ((URL) throws -> Void)? = nil) throws -> URL {
        if let kept = modelsDirectory.kept(model) {
            try verify?(kept)
            try label(kept, variant: model.variant)
            return kept
        }
        let versions = modelsDirectory.versionsDirectory(model.name)
        let staging = versions.appendingPathComponent(".staging-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
            for file in model.files {
                try Task.checkCancellation()
                guard let source = downloads[file.sha256] else { throw ClientError.io(path: file.name.rawValue, reason: "not downloaded") }
                if let tree = model.tree, let path = file.path {
                    let destination = path.appended(to: staging.appendingPathComponent(tree.rawValue))
                    try FileManager.default.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
                    try Self.place(source, at: destination)
                } else if let folder = file.packedDirectoryName {
                    let stored = try unpack(source, into: staging, expectedRoot: folder, model: model.name.rawValue, file: file.name.rawValue)
                    if let index = indexes[file.sha256] { try keepSeed(index, stored: stored, for: file, in: staging) }
                } else {
                    try Self.place(source, at: staging.appendingPathComponent(file.name.rawValue))
                    if let index = indexes[file.sha256] { try keepSeed(index, stored: nil, for: file, in: staging) }
                }
            }
            let record = VersionRecord(name: model.name.rawValue, version: model.version.rawValue, mainFile: Self.mainFile(model).rawValue,
                                       artifacts: model.files.map(\.sha256.rawValue), manifestURL: manifestURL, sequence: sequence,
                                       variant: model.variant?.rawValue)
            try JSONEncoder().encode(record).write(to: staging.appendingPathComponent(ModelsDirectory.recordName))
            try verify?(staging)
            let final = versions.appendingPathComponent(ModelsDirectory.versionID(model))
            try? FileManager.default.removeItem(at: final)  // an incomplete one (no record): it is rebuilt; if it stays, the move says why
            try FileManager.default.moveItem(at: staging, to: final)
            return final
        } catch {
            // The build's failure is reported; a staging directory left behind goes with the next prune.
            try? FileManager.default.removeItem(at: staging)
            if error is CancellationError { throw error }
            throw ClientError.io(staging, error)
        }
    }

    /// Makes the record of the version directory `version` name `variant`. Two variants
    /// with the same files share a version directory, and a client that did not know
    /// variants recorded none: the record then says what is installed now.
    func label(_ version: URL, variant: ModelName?) throws {
        guard var record = ModelsDirectory.record(in: version), record.variant != variant?.rawValue else { return }
        record.variant = variant?.rawValue
        let path = version.appendingPathComponent(ModelsDirectory.recordName)
        do { try JSONEncoder().encode(record).write(to: path, options: .atomic) } catch { throw ClientError.io(path, error) }
    }

    /// Puts the proven download `source` at `destination`: a second link to the same
    /// bytes (instant, no second copy of a model on the disk while it is installed), or a
    /// copy where the file system cannot link. Downloads are never written again once
    /// complete, so the two names cannot diverge.
    static func place(_ source: URL, at destination: URL) throws {
        do { try FileManager.default.linkItem(at: source, to: destination) } catch {
            try FileManager.default.copyItem(at: source, to: destination)
        }
    }

    /// The model itself inside its version directory: the tree's directory, a zipped
    /// directory's unpacked folder, or the first file.
    static func mainFile(_ model: CheckedModel) -> PathSegment {
        if let tree = model.tree { return tree }
        let first = model.files[0]
        return first.packedDirectoryName ?? first.name
    }

    /// Points `current` at `version` with one rename.
    func activate(_ name: ModelName, version: URL) throws {
        let link = modelsDirectory.currentLink(name)
        let temporary = modelsDirectory.modelDirectory(name).appendingPathComponent(".current-\(UUID().uuidString)")
        do {
            try FileManager.default.createSymbolicLink(atPath: temporary.path, withDestinationPath: "versions/" + version.lastPathComponent)
            guard rename(temporary.path, link.path) == 0 else {
                throw ClientError.io(path: link.path, reason: String(cString: strerror(errno)))
            }
        } catch {
            try? FileManager.default.removeItem(at: temporary)  // as in `build`: a leftover goes with the next prune
            throw ClientError.io(link, error)
        }
    }

    /// Deletes versions of `name` other than `keep` (directory names), and leftovers of
    /// interrupted installs: only what this client created under `models/NAME/`.
    func prune(_ name: ModelName, keep: Set<String>) {
        // Runs once the switch holds, so nothing here may fail the update: what cannot be
        // listed or deleted now, the next update's prune deletes.
        let versions = modelsDirectory.versionsDirectory(name)
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: versions.path)) ?? [] where !keep.contains(entry) {
            try? FileManager.default.removeItem(at: versions.appendingPathComponent(entry))
        }
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: modelsDirectory.modelDirectory(name).path)) ?? [] where entry.hasPrefix(".current-") {
            try? FileManager.default.removeItem(at: modelsDirectory.modelDirectory(name).appendingPathComponent(entry))
        }
    }

    /// Deletes a model the manifest no longer names: its `current` link, its versions, and
    /// its directory once empty. Only a directory holding what this client creates is touched.
    func remove(_ name: ModelName) {
        let model = modelsDirectory.modelDirectory(name)
        // Unlisted (nil) is not known to be the client's alone: it stays.
        guard Self.holdsOnlyClientEntries(try? FileManager.default.contentsOfDirectory(atPath: model.path)) else { return }
        // As in `prune`, best effort once the switch holds; without its link first, the model
        // is no longer installed whatever else stays.
        try? FileManager.default.removeItem(at: modelsDirectory.currentLink(name))
        prune(name, keep: [])
        try? FileManager.default.removeItem(at: modelsDirectory.versionsDirectory(name))
        try? FileManager.default.removeItem(at: model)
    }

    /// Whether a model directory whose listing is `entries` holds only what this client
    /// creates there (`current`, `versions`, a leftover `.current-…` link); not when it
    /// could not be listed (nil): what it holds is unknown.
    static func holdsOnlyClientEntries(_ entries: [String]?) -> Bool {
        guard let entries else { return false }
        return entries.allSatisfy { $0 == "current" || $0 == "versions" || $0.hasPrefix(".current-") }
    }

    /// Unpacks a zip into `destination` after checking it (`CheckedZip`: the device's rules,
    /// which verify applies too, and every entry under `expectedRoot/`, at most
    /// `maxZipEntries` entries); the sizes the entries declare must add up to no more than
    /// `maxZipBytes` and the free space less `reservedSpace`. While unpacking, the bytes
    /// actually written are counted: an entry may not inflate past the size its header
    /// declares, nor the whole past that budget; every CRC is checked. Returns where the
    /// zip's stored entries lie in it.
    @discardableResult
    func unpack(_ zip: URL, into destination: URL, expectedRoot: PathSegment, model: String, file: String) throws -> [ZipStoredData] {
        let checked = try CheckedZip(zip, into: destination, expectedRoot: expectedRoot, maxEntries: Self.maxZipEntries, model: model, file: file)
        let archive: Archive
        do { archive = try Archive(url: zip, accessMode: .read) } catch {
            throw ClientError.unsafeArchive(model: model, file: file, reason: "not a readable zip (\(error))")
        }
        let entries = try Self.paired(archive, with: checked, model: model, file: file)
        let spare = freeSpace(at: destination.deletingLastPathComponent()).map { max(0, $0 - Self.reservedSpace) }
        let budget = min(Self.maxZipBytes, spare ?? Self.maxZipBytes)
        // Refused before a byte is written when the sizes the entries declare do not fit
        // (each entry is held to its declared size while it is written).
        var declaredTotal: Int64 = 0
        for (entry, _) in entries where entry.type == .file {
            declaredTotal = Self.add(declaredTotal, try Self.declaredSize(entry, model: model, file: file))
        }
        guard declaredTotal <= budget else {
            throw ClientError.unsafeArchive(model: model, file: file, reason: "its entries declare \(declaredTotal) bytes unpacked, more than the \(budget) it may take (the cap, or the free space less \(Self.reservedSpace) kept free)")
        }
        var total: Int64 = 0
        for (entry, target) in entries {
            try Task.checkCancellation()
            if entry.type == .directory {
                try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
                continue
            }
            try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            guard FileManager.default.createFile(atPath: target.path, contents: nil) else {
                throw ClientError.io(path: target.path, reason: "cannot create")
            }
            let handle: FileHandle
            do { handle = try FileHandle(forWritingTo: target) } catch { throw ClientError.io(target, error) }
            // try?: what a close could report, the byte count and every CRC check below
            // catch first; an entry that failed is removed with the whole version.
            defer { try? handle.close() }
            let declared = try Self.declaredSize(entry, model: model, file: file)
            var written: Int64 = 0
            do {
                _ = try archive.extract(entry, skipCRC32: false) { chunk in
                    written += Int64(chunk.count)
                    total += Int64(chunk.count)
                    guard written <= declared else {
                        throw ClientError.unsafeArchive(model: model, file: file, reason: "entry \(quotedValue(entry.path)) inflates past the \(declared) bytes it declares")
                    }
                    guard total <= budget else {
                        throw ClientError.unsafeArchive(model: model, file: file, reason: "unpacks to more than \(budget) bytes (the cap, or the free space)")
                    }
                    try handle.write(contentsOf: chunk)
                }
            } catch let error as ClientError {
                throw error
            } catch {
                throw ClientError.unsafeArchive(model: model, file: file, reason: "entry \(quotedValue(entry.path)): \(readableReason(error))")
            }
            guard written == declared else {
                throw ClientError.unsafeArchive(model: model, file: file, reason: "entry \(quotedValue(entry.path)) unpacks to \(written) bytes, not the \(declared) it declares")
            }
        }
        return checked.inspection.storedData
    }

    /// The entries of `archive` as ZIPFoundation reads them (what it extracts), each with
    /// where it unpacks: they must be the checked entries, in the same order, by name (and
    /// none a link, which the checks refused: ZIPFoundation would create one).
    private static func paired(_ archive: Archive, with checked: CheckedZip, model: String, file: String) throws -> [(Entry, URL)] {
        let listed = checked.inspection.entries
        var entries: [(Entry, URL)] = []
        for entry in archive {
            let index = entries.count
            guard index < listed.count, entry.path == listed[index].name, entry.type != .symlink else {
                let expected = index < listed.count ? quotedValue(listed[index].name) : "no entry"
                throw ClientError.unsafeArchive(model: model, file: file, reason: "its entries read differently from its central directory: entry \(index + 1) reads as \(quotedValue(entry.path)), the directory lists \(expected)")
            }
            entries.append((entry, checked.destinations[index]))
        }
        guard entries.count == listed.count else {
            throw ClientError.unsafeArchive(model: model, file: file, reason: "its entries read differently from its central directory: \(entries.count) entries read, \(listed.count) listed")
        }
        return entries
    }
}

/// Free bytes on the file system holding `url` (nil when the system cannot tell).
func freeSpace(at url: URL) -> Int64? {
    var path = url
    while !FileManager.default.fileExists(atPath: path.path), path.pathComponents.count > 1 { path.deleteLastPathComponent() }
    guard let attributes = try? FileManager.default.attributesOfFileSystem(forPath: path.path) else { return nil }
    return (attributes[.systemFreeSize] as? NSNumber)?.int64Value
}
