import Crypto
import Foundation
import ModelCastFormat
import ZIPFoundation

/// A model version installed on the device.
public struct InstalledModel: Sendable, Equatable {
    public let name: String
    public let version: String
    /// The version's directory (`models/NAME/versions/VERSION-…`): the model's files by
    /// their name, a tree model's directory, a zipped directory unpacked.
    public let directory: URL
    /// The model itself: its first file (for a zipped directory, the unpacked directory;
    /// for a tree model, the tree's directory).
    public let mainFile: URL
}

/// Puts proven files in place and switches the model's `current` link with one rename.
///
///     models/NAME/versions/VERSION-<id>/   one directory per installed version
///     models/NAME/current                  a symbolic link to the version in use
///
/// A version directory is built under a temporary name and renamed into place whole,
/// with a record of the artifacts it came from; `current` is replaced by renaming a new
/// link over it. A crash at any point leaves `current` naming a complete version.
struct Installer: Sendable {
    let directory: URL
    /// Largest number of entries and unpacked bytes accepted from one zip.
    static let maxZipEntries = 100_000
    static let maxZipBytes: Int64 = 64 << 30

    func modelDirectory(_ name: String) -> URL { directory.appendingPathComponent(name) }
    func versionsDirectory(_ name: String) -> URL { modelDirectory(name).appendingPathComponent("versions") }
    func currentLink(_ name: String) -> URL { modelDirectory(name).appendingPathComponent("current") }

    /// The directory name a version gets: its version and a digest of the artifacts it came
    /// from, so the same version with the same bytes is recognised (and reused) after a rollback.
    static func versionID(_ model: ReleaseModel) -> String {
        let digest = SHA256Small.hash(Array(model.files.map { $0.sha256 + " " + $0.placement }.joined(separator: "\n").utf8))
        return model.version + "-" + digest.prefix(6).map { String(format: "%02x", $0) }.joined()
    }

    /// The installed version of `model` when one with exactly these artifacts is kept.
    func kept(_ name: String, _ model: ReleaseModel) -> URL? {
        let path = versionsDirectory(name).appendingPathComponent(Self.versionID(model))
        guard let record = try? Data(contentsOf: path.appendingPathComponent(Self.recordName)),
              let files = try? JSONDecoder().decode([String].self, from: record),
              files == model.files.map(\.sha256) else { return nil }
        return path
    }

    static let recordName = ".modelcast-artifacts.json"

    /// Builds the version directory from the proven downloads (by SHA-256) and returns it.
    func build(_ name: String, _ model: ReleaseModel, downloads: [String: URL]) throws -> URL {
        if let kept = kept(name, model) { return kept }
        let versions = versionsDirectory(name)
        let staging = versions.appendingPathComponent(".staging-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
            for file in model.files {
                guard let source = downloads[file.sha256] else { throw ClientError.io(path: file.name, reason: "not downloaded") }
                if let tree = model.tree, let path = file.path {
                    let destination = try Self.inside(staging.appendingPathComponent(tree), relative: path, file: file.name)
                    try FileManager.default.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
                    try FileManager.default.copyItem(at: source, to: destination)
                } else if let folder = Self.packedDirectoryName(file) {
                    try unpack(source, into: staging, expectedRoot: folder, file: file.name)
                } else {
                    let destination = try Self.inside(staging, relative: file.name, file: file.name)
                    try FileManager.default.copyItem(at: source, to: destination)
                }
            }
            try JSONEncoder().encode(model.files.map(\.sha256)).write(to: staging.appendingPathComponent(Self.recordName))
            let final = versions.appendingPathComponent(Self.versionID(model))
            try? FileManager.default.removeItem(at: final)  // an incomplete one (no record): it is rebuilt
            try FileManager.default.moveItem(at: staging, to: final)
            return final
        } catch {
            try? FileManager.default.removeItem(at: staging)
            if let error = error as? ClientError { throw error }
            throw ClientError.io(path: staging.path, reason: String(describing: error))
        }
    }

    /// Points `current` at `version` with one rename.
    func activate(_ name: String, version: URL) throws {
        let link = currentLink(name)
        let temporary = modelDirectory(name).appendingPathComponent(".current-\(UUID().uuidString)")
        do {
            try FileManager.default.createSymbolicLink(atPath: temporary.path, withDestinationPath: "versions/" + version.lastPathComponent)
            guard rename(temporary.path, link.path) == 0 else {
                throw ClientError.io(path: link.path, reason: String(cString: strerror(errno)))
            }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            if let error = error as? ClientError { throw error }
            throw ClientError.io(path: link.path, reason: String(describing: error))
        }
    }

    /// The version `current` names, if any.
    func current(_ name: String) -> URL? {
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: currentLink(name).path) else { return nil }
        let path = modelDirectory(name).appendingPathComponent(target)
        return FileManager.default.fileExists(atPath: path.appendingPathComponent(Self.recordName).path) ? path : nil
    }

    /// Deletes versions of `name` other than `keep` (directory names), and leftovers of
    /// interrupted installs: only what this client created under `models/NAME/`.
    func prune(_ name: String, keep: Set<String>) {
        let versions = versionsDirectory(name)
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: versions.path)) ?? [] where !keep.contains(entry) {
            try? FileManager.default.removeItem(at: versions.appendingPathComponent(entry))
        }
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: modelDirectory(name).path)) ?? [] where entry.hasPrefix(".current-") {
            try? FileManager.default.removeItem(at: modelDirectory(name).appendingPathComponent(entry))
        }
    }

    /// A zip modelcast packed from a directory: `NAME.zip`, served as application/zip,
    /// its entries under `NAME/`. nil for any other file (installed as it is).
    static func packedDirectoryName(_ file: ReleaseFile) -> String? {
        guard file.path == nil, file.name.hasSuffix(".zip"), file.contentType == "application/zip" else { return nil }
        let folder = String(file.name.dropLast(4))
        return folder.contains(".") ? folder : nil  // a directory model's name keeps its extension (X.mlpackage)
    }

    /// Unpacks a zip into `destination` after checking every entry: a relative path under
    /// `expectedRoot/` with no `..`, `.` or empty segment, a regular file or directory
    /// (no links), at most `maxZipEntries` entries and `maxZipBytes` unpacked; every CRC checked.
    func unpack(_ zip: URL, into destination: URL, expectedRoot: String, file: String) throws {
        let archive: Archive
        do { archive = try Archive(url: zip, accessMode: .read) } catch {
            throw ClientError.unsafeArchive(file: file, reason: "not a readable zip (\(error))")
        }
        var entries: [(Entry, URL)] = []
        var total: Int64 = 0
        for entry in archive {
            guard entries.count < Self.maxZipEntries else { throw ClientError.unsafeArchive(file: file, reason: "more than \(Self.maxZipEntries) entries") }
            let path = entry.path
            guard path == expectedRoot + "/" || path.hasPrefix(expectedRoot + "/") else {
                throw ClientError.unsafeArchive(file: file, reason: "entry '\(path)' is outside \(expectedRoot)/")
            }
            switch entry.type {
            case .file, .directory: break
            case .symlink: throw ClientError.unsafeArchive(file: file, reason: "entry '\(path)' is a symbolic link")
            }
            total += Int64(entry.uncompressedSize)
            guard total <= Self.maxZipBytes else { throw ClientError.unsafeArchive(file: file, reason: "unpacks to more than \(Self.maxZipBytes) bytes") }
            entries.append((entry, try Self.inside(destination, relative: path, file: file)))
        }
        for (entry, target) in entries {
            if entry.type == .directory {
                try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
                continue
            }
            try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            guard !FileManager.default.fileExists(atPath: target.path) else {
                throw ClientError.unsafeArchive(file: file, reason: "entry '\(entry.path)' appears twice")
            }
            do { _ = try archive.extract(entry, to: target, skipCRC32: false) } catch {
                throw ClientError.unsafeArchive(file: file, reason: "entry '\(entry.path)': \(error)")
            }
        }
    }

    /// `base/relative`, refusing a path that is absolute or has an empty, `.` or `..` segment.
    static func inside(_ base: URL, relative: String, file: String) throws -> URL {
        let trimmed = relative.hasSuffix("/") ? String(relative.dropLast()) : relative
        let segments = trimmed.split(separator: "/", omittingEmptySubsequences: false)
        guard !trimmed.isEmpty, !relative.hasPrefix("/"), !relative.contains("\\"), !relative.contains("\0"),
              segments.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }) else {
            throw ClientError.unsafeArchive(file: file, reason: "path '\(relative)' could leave the model's directory")
        }
        return segments.reduce(base) { $0.appendingPathComponent(String($1)) }
    }
}
