import Foundation

/// A model on disk as model signing sees it: a single file (named `.`), or every regular
/// file under a directory (named by its relative POSIX path, as the file system spells it),
/// less the files under the ignore paths. Symbolic links, special files and names that are
/// not UTF-8 are refused (`ModelTree`'s rules), as model_signing refuses symbolic links.
package struct ModelFiles: Sendable {
    /// The model path as given.
    package let path: String
    /// The statement's subject name: the model's last path component.
    package let name: String
    /// True for a directory model.
    package let isDirectory: Bool
    /// Each file's name and where it is on disk.
    package let files: [(name: ModelFilePath, diskPath: String)]

    /// Scans `model`, leaving out files under `ignoring` (directory models only).
    package static func scan(_ model: String, ignoring: [ModelFilePath]) throws -> ModelFiles {
        guard let info = try linkStatus(model) else { throw ModelCastError.notFound(path: model) }
        let name = subjectName(model)
        switch FileType(mode: info.st_mode) {
        case .regular:
            return ModelFiles(path: model, name: name, isDirectory: false, files: [(.wholeFile, model)])
        case .directory:
            let tree = try ModelTree.scan(model)
            let files = try tree.entries.filter { !$0.isDirectory }.map { entry in
                (name: try ModelFilePath(String(entry.diskPath.dropFirst(tree.root.count + 1))), diskPath: entry.diskPath)
            }
            return ModelFiles(path: model, name: name, isDirectory: true, files: files.filter { file in !ignoring.contains { file.name.isWithin($0) } })
        case .symlink:
            throw ModelCastError.symlink(path: model, target: linkTarget(model))
        case .other(let kind):
            throw ModelCastError.specialFile(path: model, kind: kind)
        }
    }

    /// Each file's SHA-256 (files read concurrently, one per core, in flat memory).
    package func digests() throws -> [ModelFilePath: SHA256Hex] {
        let results = try StreamDigester.digest(ofFilesAt: files.map(\.diskPath))
        return Dictionary(zip(files.map(\.name), results.map { SHA256Hex(bytes: $0.sha256.bytes) }), uniquingKeysWith: { first, _ in first })
    }

    /// model_signing's subject name: the last path component, or for `.`, `..` and `/`
    /// the name of the directory they resolve to.
    static func subjectName(_ model: String) -> String {
        let last = PathText.lastComponent(PathText.trimmingTrailingSlashes(model))
        guard last.isEmpty || last == "." || last == ".." else { return last }
        return realPath(model).map { PathText.lastComponent($0) } ?? last
    }

    /// The name the signature file at `signature` has inside the directory model `model`,
    /// or nil when it lies outside it (symbolic links resolved, as model_signing does):
    /// a signature kept inside its model is left out of it.
    package static func signatureName(_ signature: String, inside model: String) -> ModelFilePath? {
        guard let root = realPath(model) else { return nil }
        let parent = PathText.parent(signature)
        guard let directory = realPath(parent.isEmpty ? "." : parent) else { return nil }
        let full = (directory == "/" ? "" : directory) + "/" + PathText.lastComponent(signature)
        let prefix = root == "/" ? "/" : root + "/"
        guard full.hasPrefix(prefix), full.count > prefix.count else { return nil }
        // A name no model file can have: `scan` refuses the file itself when it meets it.
        return try? ModelFilePath(String(full.dropFirst(prefix.count)))
    }
}
