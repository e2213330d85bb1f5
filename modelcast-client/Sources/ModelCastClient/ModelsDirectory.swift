import Foundation
import ModelCastFormat

/// `models/` as the installer lays it out, and what it says is installed:
///
///     models/NAME/versions/VERSION-<id>/   one directory per installed version, with its record
///     models/NAME/current                  a symbolic link to the version in use
///
/// Everything here reads the disk alone (no network, no `state.json`), so what is
/// installed survives a crash or a lost state; `Installer` is what writes it. A version
/// directory counts only with its record (`.modelcast-version.json`), which `Installer`
/// writes before the directory takes its name.
struct ModelsDirectory: Sendable {
    let directory: URL

    static let recordName = ".modelcast-version.json"

    func modelDirectory(_ name: ModelName) -> URL { directory.appendingPathComponent(name.segment.rawValue) }
    func versionsDirectory(_ name: ModelName) -> URL { modelDirectory(name).appendingPathComponent("versions") }
    func currentLink(_ name: ModelName) -> URL { modelDirectory(name).appendingPathComponent("current") }

    /// The directory name a version gets: its version and a digest of the artifacts it came
    /// from, so the same version with the same bytes is recognised (and reused) after a
    /// rollback. A version is at most 128 characters, so this is a safe file name.
    static func versionID(_ model: CheckedModel) -> String {
        let digest = SHA256Small.hash(Array(model.files.map { $0.sha256.rawValue + " " + $0.placement.rawValue }.joined(separator: "\n").utf8))
        return model.version.rawValue + "-" + digest.prefix(6).map { String(format: "%02x", $0) }.joined()
    }

    /// The record of an installed version directory, if it is a complete one.
    static func record(in version: URL) -> VersionRecord? {
        // No record, or one that does not decode, is an incomplete version: it is not used,
        // and the next install of it builds it again.
        guard let data = try? Data(contentsOf: version.appendingPathComponent(recordName)) else { return nil }
        return try? JSONDecoder().decode(VersionRecord.self, from: data)
    }

    /// The installed version of `model` when one with exactly these artifacts is kept.
    func kept(_ model: CheckedModel) -> URL? {
        let path = versionsDirectory(model.name).appendingPathComponent(Self.versionID(model))
        guard let record = Self.record(in: path), record.artifacts == model.files.map(\.sha256.rawValue) else { return nil }
        return path
    }

    /// The version `current` names, if it is a complete one.
    func current(_ name: ModelName) -> URL? {
        // No link (never installed) or a link naming anything but a version directory: no version in use.
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: currentLink(name).path),
              target.hasPrefix("versions/"), let id = try? PathSegment(String(target.dropFirst("versions/".count))) else { return nil }
        let path = versionsDirectory(name).appendingPathComponent(id.rawValue)
        return Self.record(in: path) != nil ? path : nil
    }

    /// Every complete version of `name` kept on the device: the one in use first, then the
    /// others (older versions kept for a rollback) by directory name.
    func keptVersions(_ name: ModelName) -> [URL] {
        let current = current(name)
        // try?: a versions folder that cannot be listed keeps no other version to seed from.
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: versionsDirectory(name).path)) ?? []
        let others = entries.sorted().compactMap { entry -> URL? in
            // try?: an entry that is no version directory name is none of the client's; a
            // dot-named one is a version still being built (or a leftover of one).
            guard !entry.hasPrefix("."), let id = try? PathSegment(entry) else { return nil }
            let path = versionsDirectory(name).appendingPathComponent(id.rawValue)
            return path.lastPathComponent != current?.lastPathComponent && Self.record(in: path) != nil ? path : nil
        }
        return (current.map { [$0] } ?? []) + others
    }

    /// What is installed, read from the disk alone: every model directory whose `current`
    /// link names a complete version.
    func installedModels() -> [InstalledModel] {
        installedVersions().map(\.model)
    }

    /// `installedModels()`, each with its name as parsed from its directory's name.
    func installedVersions() -> [(name: ModelName, model: InstalledModel)] {
        // Before the first install there is no `models/`; an entry that is no model name
        // is none of the client's.
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).compactMap { try? ModelName($0) }
        return names.sorted().compactMap { name in installed(name).map { (name, $0) } }
    }

    func installed(_ name: ModelName) -> InstalledModel? {
        // A record naming a main file that is no relative path is not an installed model.
        guard let version = current(name), let record = Self.record(in: version), record.name == name.rawValue,
              let main = try? RelativePath(record.mainFile) else { return nil }
        return InstalledModel(name: name.rawValue, version: record.version, variant: record.variant, directory: version,
                              mainFile: main.appended(to: currentLink(name)))
    }

    /// The version directories of `name` with a complete record, newest change first.
    func versions(_ name: ModelName) -> [String] {
        let versions = versionsDirectory(name)
        // Used to rebuild a lost state's list of kept versions: none listed is none to go back to.
        let entries = ((try? FileManager.default.contentsOfDirectory(atPath: versions.path)) ?? []).filter { !$0.hasPrefix(".") }
        let dated = entries.compactMap { entry -> (String, Date)? in
            let path = versions.appendingPathComponent(entry)
            guard Self.record(in: path) != nil else { return nil }
            // Only the order depends on it: an undated version goes last.
            let date = (try? FileManager.default.attributesOfItem(atPath: path.path)[.modificationDate] as? Date) ?? .distantPast
            return (entry, date)
        }
        return dated.sorted { $0.1 > $1.1 }.map(\.0)
    }
}
