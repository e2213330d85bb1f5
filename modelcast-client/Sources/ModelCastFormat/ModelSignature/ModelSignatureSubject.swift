import Foundation

/// What a model version's signature covers: exactly the files a device installs, named
/// the way `model_signing` names them when given the same thing on disk.
///
/// - one plain file (a GGUF): the file itself, its one resource named `.`;
/// - one zipped directory (`X.mlpackage.zip`): the unpacked `X.mlpackage`, its files named
///   inside it (`Data/com.apple.CoreML/model.mlmodel`);
/// - a tree model: the tree's directory, its files named by their path in it;
/// - several files (a GGUF and its mmproj, a package and a tokenizer): the version
///   directory holding them, each named by where it goes (`model.gguf`,
///   `X.mlpackage/Manifest.json`). The client's own records there are ignore paths.
public enum ModelSignatureSubject: Sendable, Equatable {
    case file(PathSegment)
    case directory(PathSegment)
    case versionDirectory

    /// What the client keeps in a version directory beside the model's files: a
    /// several-file model's statement lists them in `ignore_paths`, so `model_signing
    /// verify` on an installed version directory passes.
    public static let clientRecords = [".modelcast-version.json", ".modelcast-segments"]

    /// The subject of `model`'s files (see the type's description).
    public init(_ model: CheckedModel) {
        if let tree = model.tree {
            self = .directory(tree)
        } else if model.files.count == 1, let folder = model.files[0].packedDirectoryName {
            self = .directory(folder)
        } else if model.files.count == 1 {
            self = .file(model.files[0].name)
        } else {
            self = .versionDirectory
        }
    }

    /// The name model_signing gives the model in `subject[0].name`: the file's or
    /// directory's name; for a version directory, the model's name.
    public func subjectName(model: ModelName) -> String {
        switch self {
        case .file(let name), .directory(let name): return name.rawValue
        case .versionDirectory: return model.rawValue
        }
    }

    /// The paths a statement of this subject leaves out: model_signing's defaults, and for
    /// a version directory the client's records.
    public var ignorePaths: [ModelFilePath] {
        let records = self == .versionDirectory ? Self.clientRecords : []
        return (ModelSigningStatement.defaultIgnorePaths.map(\.rawValue) + records).map(ModelFilePath.init(checked:))
    }

    /// The resources whose digests the manifest itself gives (plain files and tree files,
    /// named as in the statement) and the zipped directories whose entries must be hashed
    /// once unpacked (each with the prefix its entries get: `""` or `X.mlpackage/`).
    public func knownFiles(of model: CheckedModel) -> (digests: [ModelFilePath: SHA256Hex], zipped: [(file: CheckedFile, prefix: String)]) {
        var digests: [ModelFilePath: SHA256Hex] = [:]
        var zipped: [(file: CheckedFile, prefix: String)] = []
        for file in model.files {
            switch self {
            case .file:
                digests[.wholeFile] = file.sha256
            case .directory:
                if let path = file.path { digests[ModelFilePath(checked: path.rawValue)] = file.sha256 } else { zipped.append((file, "")) }
            case .versionDirectory:
                if let folder = file.packedDirectoryName {
                    zipped.append((file, folder.rawValue + "/"))
                } else {
                    digests[ModelFilePath(checked: file.placement.rawValue)] = file.sha256
                }
            }
        }
        return (digests, zipped)
    }

    /// The statement's name of a zip entry (`X.mlpackage/Data/model.mlmodel`, as modelcast
    /// packs a directory: under the directory's own name) once unpacked: inside the
    /// directory, after the `prefix` `knownFiles` gave for its zip. Throws for a name model
    /// signing cannot hold.
    public static func resourceName(ofArchiveEntry entry: String, prefix: String) throws -> ModelFilePath {
        let inside = entry.split(separator: "/", maxSplits: 1).dropFirst().first.map(String.init) ?? entry
        return try ModelFilePath(prefix + inside)
    }
}

extension CheckedFile {
    /// For a zipped directory (`X.mlpackage.zip`, served as application/zip), the
    /// directory it unpacks to (`X.mlpackage`); nil for any other file. A directory
    /// model's name keeps its extension, so a name with no `.` before `.zip` is a file.
    public var packedDirectoryName: PathSegment? {
        guard path == nil, name.rawValue.hasSuffix(".zip"), contentType == "application/zip" else { return nil }
        let folder = String(name.rawValue.dropLast(4))
        // A folder name no device could write is no packed directory: the file stays a file.
        return folder.contains(".") ? try? PathSegment(folder) : nil
    }
}
