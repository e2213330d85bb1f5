import Foundation
import ModelCastFormat

/// What a client's directory holds, as an outside judge (the conformance kit's `state`
/// call, a support screen, a test) needs to see it: the highest sequence trusted, and per
/// installed model its version, variant, files with their digests as they are on the disk
/// now, the versions kept for a local revert and the version refused on this device.
/// Read by `ModelUpdater.installedState()`; it holds no handle and changes nothing.
public struct InstalledState: Sendable, Equatable {
    /// One file of an installed version.
    public struct File: Sendable, Equatable {
        /// Relative to `ClientConfiguration.directory`, `/`-separated, through the version's
        /// own directory (`models/NAME/versions/ID/FILE`), never through `current`, so the
        /// path names the bytes it was hashed from. No `..`, never absolute.
        public let path: String
        /// The SHA-256 of the file's bytes as read when the state was taken, lowercase hex.
        public let sha256: String
    }

    /// One installed model.
    public struct Model: Sendable, Equatable {
        public let name: String
        /// The version `current` names.
        public let version: String
        /// Its variant, nil for a model without variants (as `InstalledModel.variant`).
        public let variant: String?
        /// Every regular file of the version in use, sorted by path; the client's own records
        /// beside them (`.modelcast-version.json`, `.modelcast-segments/`) are left out.
        public let files: [File]
        /// The versions kept for `reportUnusable` to go back to, newest first.
        public let previous: [String]
        /// The version `reportUnusable` refused on this device, until a manifest names
        /// another one for the model; nil when none is.
        public let refused: String?
    }

    /// The highest manifest sequence this device accepted from
    /// `ClientConfiguration.manifestURL`; nil before the first.
    public let sequence: Int64?
    /// The installed models, sorted by name.
    public let models: [Model]
}

extension ModelUpdater {
    /// The state of `configuration.directory`, from the disk and `state.json` alone (no
    /// request is made, nothing is written). Every installed file is read and hashed, so the
    /// digests prove what is on the disk now, not what was once downloaded: it costs one
    /// read of the installed bytes. It waits for no update; called during one, it sees the
    /// models before or after that update's switch, never half of it.
    /// - Throws: `ClientError.io` when an installed file cannot be read.
    public func installedState() throws -> InstalledState {
        let state = stateFile.load()
        var models: [InstalledState.Model] = []
        for (name, model) in modelsDirectory.installedVersions() {
            let id = model.directory.lastPathComponent
            let versions = modelsDirectory.versionsDirectory(name)
            let kept = (state.installed[model.name]?.previous ?? []).filter { $0 != id }.compactMap { previous in
                ModelsDirectory.record(in: versions.appendingPathComponent(previous))?.version
            }
            let base = ["models", name.segment.rawValue, "versions", id].joined(separator: "/")
            models.append(InstalledState.Model(
                name: model.name, version: model.version, variant: model.variant,
                files: try InstalledState.files(in: model.directory, named: base).sorted { $0.path < $1.path }, previous: kept, refused: state.refused[model.name]?.version))
        }
        return InstalledState(sequence: state.sequences[configuration.manifestURL.absoluteString], models: models)
    }
}

extension InstalledState {
    /// The regular files under `version` (whose path relative to the client's directory is
    /// `base`), hashed. Symbolic links are not followed: the installer makes none, and one
    /// planted there must not lead the walk outside the directory.
    fileprivate static func files(in version: URL, named base: String, top: Bool = true) throws -> [InstalledState.File] {
        let entries: [String]
        do { entries = try FileManager.default.contentsOfDirectory(atPath: version.path) } catch { throw ClientError.io(version, error) }
        var files: [InstalledState.File] = []
        for entry in entries.sorted() {
            if top, entry == ModelsDirectory.recordName || entry == Installer.segmentsFolder { continue }
            let url = version.appendingPathComponent(entry)
            let type: FileAttributeType?
            do { type = try FileManager.default.attributesOfItem(atPath: url.path)[.type] as? FileAttributeType } catch { throw ClientError.io(url, error) }
            if type == .typeDirectory {
                files += try Self.files(in: url, named: base + "/" + entry, top: false)
            } else if type == .typeRegular {
                files.append(InstalledState.File(path: base + "/" + entry, sha256: try hash(of: url)))
            }
        }
        return files
    }
}
