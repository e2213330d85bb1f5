import Foundation
import ModelCastFormat

/// One entry of a directory model, as it will appear in the archive.
package struct TreeEntry: Sendable, Equatable {
    /// The name inside the archive: relative to the tree's parent, `/`-separated,
    /// NFC-normalised, with a trailing `/` for directories.
    package let archiveName: String
    /// Where the entry is on disk (the name as the file system spells it).
    package let diskPath: String
    /// True for a directory entry.
    package let isDirectory: Bool
    /// File size in bytes (0 for directories).
    package let size: Int64
    /// True when any execute bit is set on a regular file (archived as 0755).
    package let isExecutable: Bool
}

/// A scanned, validated directory model: every entry a regular file or directory,
/// names valid UTF-8 and unique after NFC normalisation and case folding, entries
/// sorted bytewise by archive name. Scanning reads metadata only, never file data.
package struct ModelTree: Sendable {
    /// The directory that was scanned.
    package let root: String
    /// The entries, sorted bytewise by `archiveName`, the root directory first.
    package let entries: [TreeEntry]

    /// Number of regular files.
    package var fileCount: Int { entries.filter { !$0.isDirectory }.count }
    /// Sum of regular file sizes.
    package var totalSize: Int64 { entries.reduce(0) { $0 + $1.size } }

    /// Scans `root`. Archive names start with the root's own name (`Model.mlpackage/…`),
    /// so unpacking the zip recreates the directory itself.
    package static func scan(_ root: String) throws -> ModelTree {
        guard let info = try linkStatus(root) else { throw ModelCastError.notFound(path: root) }
        guard case .directory = FileType(mode: info.st_mode) else {
            throw ModelCastError.usage("not a directory: \(root)")
        }
        let trimmed = root.hasSuffix("/") && root.count > 1 ? String(root.dropLast()) : root
        let baseName = PathText.lastComponent(trimmed)
        guard let topName = String(validating: Array(baseName.utf8), as: UTF8.self) else {
            throw ModelCastError.nonUTF8Name(path: root)
        }
        guard !containsControlCharacter(topName) else { throw ModelCastError.controlCharacterInName(path: root) }
        var entries: [TreeEntry] = []
        var seen = NameRegistry()
        let top = topName.precomposedStringWithCanonicalMapping
        try checkDeviceName(top, path: root)
        entries.append(TreeEntry(archiveName: top + "/", diskPath: trimmed, isDirectory: true, size: 0, isExecutable: false))
        try walk(directory: trimmed, archivePrefix: top + "/", into: &entries, names: &seen)
        guard entries.contains(where: { !$0.isDirectory }) else {
            throw ModelCastError.emptyDirectory(path: root)
        }
        entries.sort { Array($0.archiveName.utf8).lexicographicallyPrecedes(Array($1.archiveName.utf8)) }
        return ModelTree(root: trimmed, entries: entries)
    }

    private static func walk(
        directory: String,
        archivePrefix: String,
        into entries: inout [TreeEntry],
        names: inout NameRegistry
    ) throws {
        for rawName in try directoryNames(directory) {
            let diskPath = directory + "/" + rawName.display
            guard let name = rawName.utf8 else {
                throw ModelCastError.nonUTF8Name(path: directory + "/" + rawName.display)
            }
            guard !containsControlCharacter(name) else { throw ModelCastError.controlCharacterInName(path: diskPath) }
            guard let info = try linkStatus(diskPath) else { continue }  // vanished since readdir
            let archiveName = archivePrefix + name.precomposedStringWithCanonicalMapping
            try checkDeviceName(archiveName, path: diskPath)
            switch FileType(mode: info.st_mode) {
            case .symlink:
                throw ModelCastError.symlink(path: diskPath, target: linkTarget(diskPath))
            case .other(let kind):
                throw ModelCastError.specialFile(path: diskPath, kind: kind)
            case .directory:
                try names.claim(archiveName, diskPath: diskPath)
                entries.append(TreeEntry(archiveName: archiveName + "/", diskPath: diskPath, isDirectory: true, size: 0, isExecutable: false))
                try walk(directory: diskPath, archivePrefix: archiveName + "/", into: &entries, names: &names)
            case .regular:
                try names.claim(archiveName, diskPath: diskPath)
                guard access(diskPath, R_OK) == 0 else {
                    throw ModelCastError.unreadable(path: diskPath, reason: errnoDescription())
                }
                entries.append(TreeEntry(
                    archiveName: archiveName, diskPath: diskPath, isDirectory: false,
                    size: Int64(info.st_size), isExecutable: info.st_mode & 0o111 != 0))
            }
        }
    }

    /// Refuses an entry a device would refuse to create once unpacked: its whole archive
    /// name (already NFC) must be a `RelativePath`, the rule verify and the client apply to
    /// every zip entry (each segment, and the path's length).
    private static func checkDeviceName(_ archiveName: String, path: String) throws {
        do { _ = try RelativePath(archiveName) } catch let error as ManifestValueError {
            throw ModelCastError.unsafeName(path: path, rule: error.rule)
        }
    }

    /// A directory entry name: its UTF-8 text if valid, and a printable form either way.
    private struct RawName {
        let utf8: String?
        let display: String
    }

    private static func directoryNames(_ path: String) throws -> [RawName] {
        guard let dir = opendir(path) else {
            throw ModelCastError.unreadable(path: path, reason: errnoDescription())
        }
        defer { closedir(dir) }
        var names: [RawName] = []
        while true {
            errno = 0
            guard let entry = readdir(dir) else {
                if errno != 0 { throw ModelCastError.unreadable(path: path, reason: errnoDescription()) }
                break
            }
            let bytes: [UInt8] = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                Array(raw.prefix { $0 != 0 })
            }
            if bytes == [0x2e] || bytes == [0x2e, 0x2e] { continue }
            let text = String(validating: bytes, as: UTF8.self)
            names.append(RawName(utf8: text, display: text ?? String(decoding: bytes, as: UTF8.self)))
        }
        return names
    }
}

/// Detects names that a device would merge: equal after NFC normalisation (APFS
/// normalises) or after case folding (iOS volumes are case-insensitive).
struct NameRegistry {
    private var byNormalisedName: [String: String] = [:]
    private var byFoldedName: [String: String] = [:]

    mutating func claim(_ archiveName: String, diskPath: String) throws {
        if let other = byNormalisedName[archiveName] {
            throw ModelCastError.nameCollision(first: other, second: diskPath, rule: "Unicode NFC normalisation")
        }
        let folded = archiveName.lowercased().precomposedStringWithCanonicalMapping
        if let other = byFoldedName[folded] {
            throw ModelCastError.nameCollision(first: other, second: diskPath, rule: "case folding")
        }
        byNormalisedName[archiveName] = diskPath
        byFoldedName[folded] = diskPath
    }
}
