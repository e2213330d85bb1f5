import Foundation
import ModelCastFormat

extension ModelSignatureCheck {
    /// Holds the version directory `version` of `model` (staged, or kept and about to be
    /// switched to again) against the verified `statement`: the files in the signature's
    /// subject (`ModelSignatureSubject`), less those under the statement's ignore paths,
    /// must be exactly the files it lists, each with its SHA-256. Throws
    /// `modelSignatureMismatch` naming every changed, missing or extra file.
    static func compare(_ statement: ModelSigningStatement, model: CheckedModel, version: URL) throws {
        let found = try filesOnDisk(model, in: version, ignoring: statement.ignorePaths)
        let differences = ModelSignatureDifferences(signed: statement.files, actual: found.digests)
        let problems = differences.descriptions + found.problems
        guard problems.isEmpty else {
            throw ClientError.modelSignatureMismatch(model: model.name.rawValue, version: model.version.rawValue, differences: problems)
        }
    }

    /// The files of the signature's subject in `version`, named as the statement names
    /// them, with their SHA-256: the manifest's for the files it names, which the download
    /// proved (plain and tree files); read from the disk for every other file (the entries
    /// of an unpacked zip, anything unexpected). `problems`: entries that are neither a
    /// regular file nor a directory, or whose names model signing cannot hold.
    static func filesOnDisk(_ model: CheckedModel, in version: URL, ignoring: [ModelFilePath]) throws
        -> (digests: [ModelFilePath: SHA256Hex], problems: [String]) {
        let subject = ModelSignatureSubject(model)
        let known = subject.knownFiles(of: model).digests
        var files: [(name: ModelFilePath, url: URL)] = []
        var problems: [String] = []
        switch subject {
        case .file(let name):
            let url = version.appendingPathComponent(name.rawValue)
            if fileType(url) == .typeRegular { files = [(.wholeFile, url)] }
        case .directory(let name):
            try walk(version.appendingPathComponent(name.rawValue), under: [], ignoring: ignoring, files: &files, problems: &problems)
        case .versionDirectory:
            try walk(version, under: [], ignoring: ignoring, files: &files, problems: &problems)
        }
        var digests: [ModelFilePath: SHA256Hex] = [:]
        for file in files {
            try Task.checkCancellation()
            if let digest = known[file.name] {
                digests[file.name] = digest
            } else {
                let text = try hash(of: file.url)
                guard let digest = SHA256Hex(hex: text) else { throw ClientError.io(path: file.url.path, reason: "cannot hash") }
                digests[file.name] = digest
            }
        }
        return (digests, problems)
    }

    /// Collects the regular files under `directory` (whose name in the model is `under`),
    /// skipping names within `ignoring`; symbolic links and special files are problems.
    private static func walk(_ directory: URL, under: [String], ignoring: [ModelFilePath],
                             files: inout [(name: ModelFilePath, url: URL)], problems: inout [String]) throws {
        let entries: [String]
        do { entries = try FileManager.default.contentsOfDirectory(atPath: directory.path) } catch {
            // No subject directory: every file the statement lists is missing.
            guard FileManager.default.fileExists(atPath: directory.path) else { return }
            throw ClientError.io(directory, error)
        }
        for entry in entries.sorted() {
            let url = directory.appendingPathComponent(entry)
            let relative = (under + [entry]).joined(separator: "/")
            let name: ModelFilePath
            do { name = try ModelFilePath(relative) } catch {
                problems.append("\(quotedValue(relative, limit: 200)) is a name model signing cannot hold")
                continue
            }
            guard !ignoring.contains(where: { name.isWithin($0) }) else { continue }
            switch fileType(url) {
            case .typeDirectory?: try walk(url, under: under + [entry], ignoring: ignoring, files: &files, problems: &problems)
            case .typeRegular?: files.append((name, url))
            default: problems.append("\(quotedValue(relative, limit: 200)) is not a regular file (model signing signs regular files only)")
            }
        }
    }

    /// The type of the entry at `url` itself (a symbolic link is not followed).
    private static func fileType(_ url: URL) -> FileAttributeType? {
        // No type (the entry cannot be examined) is reported as not a regular file: the
        // version is refused, as it would be for any unsigned entry.
        (try? FileManager.default.attributesOfItem(atPath: url.path))?[.type] as? FileAttributeType
    }
}
