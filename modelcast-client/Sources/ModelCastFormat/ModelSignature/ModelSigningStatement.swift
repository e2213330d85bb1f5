import Foundation

/// One file of a signed model and its SHA-256: an entry of `predicate.resources`.
public struct ModelSigningResource: Sendable, Equatable {
    public let path: ModelFilePath
    public let sha256: SHA256Hex
}

/// The in-toto statement an OpenSSF model signature signs (predicate type
/// `https://model_signing/signature/v1.0`, "files" serialization with SHA-256): the model's
/// name, every file with its SHA-256, and the paths left out. See docs/model-signing.md.
public struct ModelSigningStatement: Sendable, Equatable {
    public static let statementType = "https://in-toto.io/Statement/v1"
    public static let predicateType = "https://model_signing/signature/v1.0"
    /// The paths model_signing leaves out of a model by default (relative to the model).
    public static let defaultIgnorePaths = [".git", ".gitattributes", ".github", ".gitignore"].map(ModelFilePath.init(checked:))

    /// `subject[0].name`: the model's file or directory name. Informative only: renaming
    /// a model does not invalidate its signature.
    public let modelName: String
    /// `predicate.resources`, in the order they are listed (and hashed for the subject).
    public let resources: [ModelSigningResource]
    /// `predicate.serialization.ignore_paths`: files under these are not part of the model.
    public let ignorePaths: [ModelFilePath]
    /// `predicate.serialization.allow_symlinks` (modelcast always writes false).
    public let allowSymlinks: Bool

    /// A statement for a model's files, listed in model_signing's order.
    public init(modelName: String, files: [ModelFilePath: SHA256Hex], ignorePaths: [ModelFilePath]) {
        self.init(modelName: modelName, resources: files.keys.sorted().map { ModelSigningResource(path: $0, sha256: files[$0]!) },
                  ignorePaths: ignorePaths, allowSymlinks: false)
    }

    init(modelName: String, resources: [ModelSigningResource], ignorePaths: [ModelFilePath], allowSymlinks: Bool) {
        self.modelName = modelName
        self.resources = resources
        self.ignorePaths = ignorePaths
        self.allowSymlinks = allowSymlinks
    }

    /// `subject[0].digest.sha256`: the SHA-256 of the resources' raw 32-byte digests,
    /// concatenated in the order listed.
    public func rootDigest() -> SHA256Hex {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(resources.count * 32)
        for resource in resources { bytes += resource.sha256.bytes }
        return SHA256Hex(bytes: SHA256Small.hash(bytes))
    }

    /// The files as a name → digest map.
    public var files: [ModelFilePath: SHA256Hex] {
        Dictionary(resources.map { ($0.path, $0.sha256) }, uniquingKeysWith: { first, _ in first })
    }

    /// The statement as the DSSE payload: JSON with two-space indentation and fixed key
    /// order (model_signing's key order varies run to run; only the parsed values count).
    public func payload() -> [UInt8] {
        let serialization = JSONValue.object([
            .init("method", .string("files")),
            .init("hash_type", .string("sha256")),
            .init("allow_symlinks", .bool(allowSymlinks)),
            .init("ignore_paths", .array(ignorePaths.map { .string($0.rawValue) })),
        ])
        let resourceList = resources.map { resource in
            JSONValue.object([
                .init("name", .string(resource.path.rawValue)),
                .init("algorithm", .string("sha256")),
                .init("digest", .string(resource.sha256.hex)),
            ])
        }
        let statement = JSONValue.object([
            .init("_type", .string(Self.statementType)),
            .init("subject", .array([.object([
                .init("name", .string(modelName)),
                .init("digest", .object([.init("sha256", .string(rootDigest().hex))])),
            ])])),
            .init("predicateType", .string(Self.predicateType)),
            .init("predicate", .object([.init("serialization", serialization), .init("resources", .array(resourceList))])),
        ])
        return Array(statement.serialized(nestedAt: 0).utf8)
    }
}
