import Foundation

/// A file of a release with every value parsed into a type that cannot hold a bad one.
/// What a device writes, where and from which URL is taken from these fields only.
public struct CheckedFile: Sendable, Equatable {
    public let name: PathSegment
    public let key: RelativePath
    public let url: DownloadURL
    public let sha256: SHA256Hex
    /// 0…2^53.
    public let size: Int64
    public let contentType: String
    /// Its path inside a tree model's directory.
    public let path: RelativePath?
    /// Its segment index, when the release names one.
    public let segments: CheckedSegmentIndex?

    /// Where the file goes inside the model's version directory: its tree path, or its name.
    public var placement: RelativePath { path ?? RelativePath(name) }
}

/// A file's segment index, parsed.
public struct CheckedSegmentIndex: Sendable, Equatable {
    public let key: RelativePath
    public let url: DownloadURL
    public let sha256: SHA256Hex
    /// 1…the largest index the format allows.
    public let size: Int64
}

/// A model of a release, parsed: its name, version, tree directory and files.
public struct CheckedModel: Sendable, Equatable {
    public let name: ModelName
    public let version: ModelVersion
    /// A tree model's directory name.
    public let tree: PathSegment?
    public let files: [CheckedFile]
    /// For a variant chosen for a device: its name. nil for a model without variants (and
    /// for the model's own files, which clients that do not know variants install).
    public let variant: ModelName?
    /// The model's variants in the order devices prefer them (empty when it has none).
    public let variants: [CheckedVariant]
    /// When devices download it; nil when the manifest leaves it to the app.
    public let downloadPolicy: DownloadPolicy?
    /// Its OpenSSF model signature, when the release names one.
    public let modelSignature: CheckedModelSignature?
    /// Its licence, when the release names one (a variant carries its model's).
    public let licence: CheckedLicence?
    /// When it may be downloaded (a variant carries its model's); `.none` when the release says nothing.
    public let conditions: DownloadConditions
    /// What it takes installed, when the release says (each variant its own).
    public let storage: StorageHint?

    public init(name: ModelName, version: ModelVersion, tree: PathSegment?, files: [CheckedFile], variant: ModelName? = nil,
                variants: [CheckedVariant] = [], downloadPolicy: DownloadPolicy? = nil, modelSignature: CheckedModelSignature? = nil,
                licence: CheckedLicence? = nil, conditions: DownloadConditions = .none, storage: StorageHint? = nil) {
        self.name = name
        self.version = version
        self.tree = tree
        self.files = files
        self.variant = variant
        self.variants = variants
        self.downloadPolicy = downloadPolicy
        self.modelSignature = modelSignature
        self.licence = licence
        self.conditions = conditions
        self.storage = storage
    }
}

/// A variant of a model, parsed: its name, requirements, and the model a device installs
/// when it takes it (the model's name, the variant's version and files).
public struct CheckedVariant: Sendable, Equatable {
    public let name: ModelName
    public let requirements: VariantRequirements
    public let model: CheckedModel
}

extension ReleaseFile {
    /// Every field parsed; a bad one is named by `field` + its key (`models.m.files[0].sha256`).
    public func checked(at field: String) throws -> CheckedFile {
        func at<T>(_ key: String, _ make: () throws -> T) throws -> T {
            do { return try make() } catch let error as ManifestValueError { throw error.at(field + "." + key) }
        }
        let name = try at("name") { try PathSegment(self.name) }
        let key = try at("key") { try RelativePath(self.key) }
        let url = try at("url") { try DownloadURL(self.url) }
        let sha256 = try at("sha256") { try SHA256Hex(self.sha256) }
        let size = try at("size") { try ByteCount(self.size).value }
        try at("content_type") { try checkPrintable(contentType, limit: 255, what: "a Content-Type") }
        let path = try at("path") { try self.path.map { try RelativePath($0) } }
        let segments = try self.segments.map { index in
            CheckedSegmentIndex(
                key: try at("segments.key") { try RelativePath(index.key) }, url: try at("segments.url") { try DownloadURL(index.url) },
                sha256: try at("segments.sha256") { try SHA256Hex(index.sha256) },
                size: try at("segments.size") {
                    let size = try ByteCount(index.size).value
                    guard size >= 48, size <= SegmentIndex.maxEncodedSize else {
                        throw ManifestValueError(field: "", value: String(size), rule: "is not the size of a segment index (48 bytes and up)")
                    }
                    return size
                })
        }
        return CheckedFile(name: name, key: key, url: url, sha256: sha256, size: size, contentType: contentType, path: path, segments: segments)
    }
}

extension ReleaseModel {
    /// The model named `name`, parsed. A tree model's files all have a path and the others
    /// none; no two files of a model go to the same place.
    public func checked(name: String, at field: String) throws -> CheckedModel {
        let modelName: ModelName
        do { modelName = try ModelName(name) } catch let error as ManifestValueError { throw error.at(field) }
        func at<T>(_ key: String, _ make: () throws -> T) throws -> T {
            do { return try make() } catch let error as ManifestValueError { throw error.at(field + "." + key) }
        }
        let version = try at("version") { try ModelVersion(self.version) }
        let tree = try at("tree") { try self.tree.map { try PathSegment($0) } }
        guard !files.isEmpty else { throw ManifestValueError(field: field + ".files", value: "[]", rule: "is empty (a model has at least one file)") }
        var placements = Set<String>()
        var checkedFiles: [CheckedFile] = []
        for (index, file) in files.enumerated() {
            let checked = try file.checked(at: "\(field).files[\(index)]")
            guard (checked.path != nil) == (tree != nil) else {
                throw ManifestValueError(field: "\(field).files[\(index)].path", value: checked.path.map { quotedValue($0.rawValue) } ?? "(none)",
                                         rule: tree == nil ? "is set, but the model is not a tree (it has no tree directory)" : "is missing: every file of a tree model has a path")
            }
            guard placements.insert(checked.placement.rawValue.lowercased()).inserted else {
                throw ManifestValueError(field: "\(field).files[\(index)]", value: quotedValue(checked.placement.rawValue), rule: "goes to the same place as another file of the model")
            }
            checkedFiles.append(checked)
        }
        let policy = try at("download") { try download.map(DownloadPolicy.init(parsing:)) }
        let signature = try modelSignature.map { try $0.checked(at: field + ".model_signature") }
        // These objects' own checks name the key inside them (`spdx`); the path is prefixed.
        func inside<T>(_ key: String, _ make: () throws -> T) throws -> T {
            do { return try make() } catch let error as ManifestValueError {
                throw error.at(field + "." + key + (error.field.isEmpty ? "" : "." + error.field))
            }
        }
        let licence = try inside("licence") { try self.licence?.checked() }
        let conditions = try inside("download_conditions") { try downloadConditions?.checked() ?? .none }
        let storage = try inside("storage") { try self.storage?.checked() }
        let shared = ModelWide(policy: policy, licence: licence, conditions: conditions)
        let variants = try checkedVariants(name: modelName, at: field, shared: shared)
        return CheckedModel(name: modelName, version: version, tree: tree, files: checkedFiles, variants: variants, downloadPolicy: policy,
                            modelSignature: signature, licence: licence, conditions: conditions, storage: storage)
    }

    /// What a model's variants take from the model: they may not state it themselves.
    private struct ModelWide {
        let policy: DownloadPolicy?
        let licence: CheckedLicence?
        let conditions: DownloadConditions
    }

    /// The variants, parsed: at most 32, unique names, each a plain model (no variants of
    /// its own); `variant` names one of them, and the model's own fields are that one's.
    private func checkedVariants(name: ModelName, at field: String, shared: ModelWide) throws -> [CheckedVariant] {
        guard let variants else {
            if let variant { throw ManifestValueError(field: field + ".variant", value: quotedValue(variant), rule: "is set, but the model has no variants") }
            return []
        }
        guard (1...32).contains(variants.count) else {
            throw ManifestValueError(field: field + ".variants", value: "\(variants.count) variants", rule: "is not 1 to 32 variants")
        }
        var names = Set<String>()
        var checked: [CheckedVariant] = []
        for (index, variant) in variants.enumerated() {
            let at = "\(field).variants[\(index)]"
            let variantName: ModelName
            do { variantName = try ModelName(variant.name) } catch let error as ManifestValueError { throw error.at(at + ".name") }
            guard names.insert(variant.name.lowercased()).inserted else {
                throw ManifestValueError(field: at + ".name", value: quotedValue(variant.name), rule: "is the name of an earlier variant")
            }
            guard variant.model.variants == nil, variant.model.variant == nil, variant.model.download == nil, variant.model.licence == nil,
                  variant.model.downloadConditions == nil else {
                throw ManifestValueError(field: at, value: quotedValue(variant.name),
                                         rule: "has variants, variant, download, licence or download_conditions of its own (only a model has them)")
            }
            let requirements: VariantRequirements
            do { requirements = try VariantRequirements(json: variant.requires) } catch let error as ManifestValueError {
                throw error.at(at + ".requires" + (error.field.isEmpty ? "" : "." + error.field))
            }
            let model = try variant.model.checked(name: name.rawValue, at: at)
            checked.append(CheckedVariant(name: variantName, requirements: requirements, model: CheckedModel(
                name: name, version: model.version, tree: model.tree, files: model.files, variant: variantName, downloadPolicy: shared.policy,
                modelSignature: model.modelSignature, licence: shared.licence, conditions: shared.conditions, storage: model.storage)))
        }
        guard let variant, let own = variants.first(where: { $0.name == variant }) else {
            throw ManifestValueError(field: field + ".variant", value: variant.map { quotedValue($0) } ?? "(none)", rule: "does not name one of the model's variants")
        }
        guard own.model.version == version, own.model.files == files, own.model.tree == tree, own.model.interface == interface,
              own.model.modelSignature == modelSignature, own.model.storage == storage else {
            throw ManifestValueError(field: field, value: quotedValue(name.rawValue), rule: "has a version, files, tree, interface, model signature or storage other than its variant \(quotedValue(variant))'s")
        }
        return checked
    }
}

extension Release {
    /// The one validation every release passes: publish before it writes one, verify on
    /// what is served, the client before anything touches its disk. Throws the first bad
    /// value as a `ManifestValueError` naming its JSON path.
    public func validate() throws {
        func at(_ field: String, _ check: () throws -> Void) throws {
            do { try check() } catch let error as ManifestValueError { throw error.at(field) }
        }
        try at("sequence") { _ = try Self.sequenceValue(sequence) }
        try at("published_at") { try Self.timestamp(publishedAt) }
        try at("expires_at") { if let expiresAt { try Self.timestamp(expiresAt) } }
        try at("channel") { _ = try ChannelName(channel) }
        try at("profile") { try checkPrintable(profile, limit: 32, what: "a profile name") }
        try at("min_app_version") { _ = try minAppVersion.map(AppVersion.init) }
        try at("replaces") { _ = try replaces.map(Self.sequenceValue) }
        _ = try checkedModels()
        _ = try prototypes?.checked(name: "prototypes", at: "prototypes")
        if let rollback {
            try at("rollback.sequence") { _ = try Self.sequenceValue(rollback.sequence) }
            for name in rollback.models.keys.sorted() {
                _ = try rollback.models[name]!.checked(name: name, at: "rollback.models.\(Self.fieldName(name))")
            }
        }
        if let rollout {
            guard Rollout.isValidSalt(rollout.salt) else {
                throw ManifestValueError(field: "rollout.salt", value: quotedValue(rollout.salt), rule: "is not 16 to 64 lowercase hexadecimal digits")
            }
            if let count = rollout.schedule?.count, count > 1000 {
                throw ManifestValueError(field: "rollout.schedule", value: "\(count) steps", rule: "has more than 1000 steps")
            }
            if let problem = rollout.problems.first { throw ManifestValueError(field: "rollout", value: "", rule: problem) }
        }
    }

    /// The release's models, parsed, by name order.
    public func checkedModels() throws -> [CheckedModel] {
        try models.keys.sorted().map { try models[$0]!.checked(name: $0, at: "models.\(Self.fieldName($0))") }
    }

    /// The fallback's models (`rollback.models`), parsed.
    public func checkedRollbackModels() throws -> [CheckedModel] {
        guard let rollback else { return [] }
        return try rollback.models.keys.sorted().map { try rollback.models[$0]!.checked(name: $0, at: "rollback.models.\(Self.fieldName($0))") }
    }

    /// A key as it can appear in a field path: itself when it is a plain name, else quoted.
    static func fieldName(_ key: String) -> String {
        (try? ModelName(key)) != nil ? key : "[" + quotedValue(key) + "]"  // a predicate: a plain name or not
    }

    static func sequenceValue(_ value: Int64) throws -> Int64 {
        guard (0...ByteCount.maximum).contains(value) else {
            throw ManifestValueError(field: "value", value: String(value), rule: "is not a sequence from 0 to 2^53")
        }
        return value
    }

    static func timestamp(_ text: String) throws {
        guard text.utf8.count <= 64, parseTimestamp(text) != nil else { throw ManifestText.refuse(text, "is not an RFC 3339 time") }
    }
}
