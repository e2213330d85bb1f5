import Foundation

/// One published object of a model.
public struct ReleaseFile: Codable, Equatable, Sendable {
    /// The file's name (`tiny-llm.gguf`, `Model.mlpackage.zip`).
    public var name: String
    /// The storage key, relative to the target root (`models/tiny-llm/1.0.0/tiny-llm.gguf`).
    public var key: String
    /// The absolute download URL (base URL + key).
    public var url: String
    /// SHA-256 of the object bytes, lowercase hex.
    public var sha256: String
    /// Object size in bytes.
    public var size: Int64
    /// Content-Type the object is served with.
    public var contentType: String
    /// For a file of a tree model: its path inside the tree (`/`-separated, NFC), where a
    /// device writes it. nil for a model's own files (the file, the zip, a companion).
    public var path: String?
    /// The file's segment index (`SegmentIndex`), when the publish wrote one: a device
    /// holding an older version fetches only the segments it lacks.
    public var segments: SegmentIndexObject?

    public enum CodingKeys: String, CodingKey {
        case name, key, url, sha256, size, path, segments
        case contentType = "content_type"
    }

    public init(name: String, key: String, url: String, sha256: String, size: Int64, contentType: String, path: String? = nil,
                segments: SegmentIndexObject? = nil) {
        self.name = name
        self.key = key
        self.url = url
        self.sha256 = sha256
        self.size = size
        self.contentType = contentType
        self.path = path
        self.segments = segments
    }

    /// Where the file goes on a device: its path in the tree, or its name.
    public var placement: String { path ?? name }
}

/// Where a file's segment index is stored, and the bytes it must be.
public struct SegmentIndexObject: Codable, Equatable, Sendable {
    /// The storage key, relative to the target root (`models/m/segments/SHA256.mcsx`).
    public var key: String
    public var url: String
    /// SHA-256 of the index bytes, lowercase hex.
    public var sha256: String
    public var size: Int64

    /// The Content-Type an index is served with.
    public static let contentType = "application/octet-stream"

    public init(key: String, url: String, sha256: String, size: Int64) {
        self.key = key
        self.url = url
        self.sha256 = sha256
        self.size = size
    }
}

/// One model of a release: a version and its files.
public struct ReleaseModel: Codable, Equatable, Sendable {
    public var version: String
    /// The files: the first is the model itself, then companions (e.g. an mmproj projector).
    public var files: [ReleaseFile]
    /// Profile fields and free-form metadata for this model (num_classes, release_notes, …).
    public var meta: [String: JSONValue]
    /// For a directory published as its files (`--no-zip`): the directory's name
    /// (`TinyClassifier.mlpackage`). Each file's `path` is inside it. nil for other models.
    public var tree: String?
    /// The model's interface as `modelcast inspect` read it (inputs, outputs, classes,
    /// vocabulary, tokenizer hash…): publish refuses a new version whose interface differs
    /// unless told the change is intended. nil when the format has none modelcast reads.
    public var interface: JSONValue?
    /// When devices download it (`DownloadPolicy`: essential, prefetch, on-demand); nil
    /// leaves it to the app. Written as text; the client parses it.
    public var download: String?
    /// Its licence, and whether a device must record the user's acceptance before it
    /// downloads anything of the model. Model-level: every variant shares it.
    public var licence: ReleaseLicence?
    /// When devices may download it (network, cellular cap, charging). Model-level.
    public var downloadConditions: ReleaseDownloadConditions?
    /// What it takes installed (and its eviction priority). A variant has its own.
    public var storage: ReleaseStorage?
    /// For a model with variants: the variant whose version and files these are (clients
    /// that do not know variants install it). nil for a model without variants.
    public var variant: String?
    /// The model's variants in the order devices prefer them; nil when it has none.
    public var variants: [ReleaseVariant]?
    /// The OpenSSF model signature of the files a device installs (`ModelSignatureSubject`),
    /// when the publish made one (`--model-signing-key`); nil otherwise.
    public var modelSignature: ModelSignatureObject?

    public init(version: String, files: [ReleaseFile], meta: [String: JSONValue] = [:], tree: String? = nil, interface: JSONValue? = nil,
                download: String? = nil, variant: String? = nil, variants: [ReleaseVariant]? = nil, modelSignature: ModelSignatureObject? = nil,
                licence: ReleaseLicence? = nil, downloadConditions: ReleaseDownloadConditions? = nil, storage: ReleaseStorage? = nil) {
        self.version = version
        self.files = files
        self.meta = meta
        self.tree = tree
        self.interface = interface
        self.download = download
        self.variant = variant
        self.variants = variants
        self.modelSignature = modelSignature
        self.licence = licence
        self.downloadConditions = downloadConditions
        self.storage = storage
    }

    public enum CodingKeys: String, CodingKey {
        case version, tree, files, meta, interface, download, variant, variants, licence, storage
        case modelSignature = "model_signature"
        case downloadConditions = "download_conditions"
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        version = try c.decode(String.self, forKey: .version)
        tree = try c.decodeIfPresent(String.self, forKey: .tree)
        files = try c.decode([ReleaseFile].self, forKey: .files)
        meta = try c.decodeIfPresent([String: JSONValue].self, forKey: .meta) ?? [:]
        interface = try c.decodeIfPresent(JSONValue.self, forKey: .interface)
        download = try c.decodeIfPresent(String.self, forKey: .download)
        variant = try c.decodeIfPresent(String.self, forKey: .variant)
        variants = try c.decodeIfPresent([ReleaseVariant].self, forKey: .variants)
        modelSignature = try c.decodeIfPresent(ModelSignatureObject.self, forKey: .modelSignature)
        licence = try c.decodeIfPresent(ReleaseLicence.self, forKey: .licence)
        downloadConditions = try c.decodeIfPresent(ReleaseDownloadConditions.self, forKey: .downloadConditions)
        storage = try c.decodeIfPresent(ReleaseStorage.self, forKey: .storage)
    }

    /// The model's version as it is stored, its variants' as `NAME@VARIANT`: every unit
    /// that has a version of its own (version rules, immutability and history apply to each).
    public func units(name: String) -> [(label: String, model: ReleaseModel)] {
        guard let variants, !variants.isEmpty else { return [(name, self)] }
        return variants.map { ("\(name)@\($0.name)", $0.model) }
    }
}

/// The previous release a manifest can fall back to.
public struct ReleaseRollback: Codable, Equatable, Sendable {
    /// Sequence of the release being pointed back to.
    public var sequence: Int64
    public var models: [String: ReleaseModel]

    public init(sequence: Int64, models: [String: ReleaseModel]) {
        self.sequence = sequence
        self.models = models
    }
}

/// A release: everything a manifest says, in modelcast's own format. It is the
/// `modelcast` profile's manifest and the history record kept for every publish
/// (`manifests/<sequence>.json`); the other profiles are renderings of it.
public struct Release: Decodable, Equatable, Sendable {
    public static let formatName = "modelcast-manifest"
    public static let formatVersion = 1

    public var sequence: Int64
    public var publishedAt: String
    public var expiresAt: String?
    public var channel: String
    /// The profile the live manifest was rendered with.
    public var profile: String
    public var minAppVersion: String?
    /// Release-wide metadata (e.g. the catalog's top-level minAppVersion).
    public var meta: [String: JSONValue]
    public var models: [String: ReleaseModel]
    /// Extra objects a profile publishes beside the models (the catalog's prototypes).
    public var prototypes: ReleaseModel?
    /// The release devices fall back to: the one live before this publish, or for a
    /// rollback the release it returns to.
    public var rollback: ReleaseRollback?
    /// A staged rollout (modelcast profile only): `models` are the candidate, `rollback`
    /// the fallback, and each device picks one by the rollout's cohort rule.
    public var rollout: Rollout?
    /// Sequence of the release that was live when this one was published (nil for the
    /// first). The chain of `replaces` is what actually went live, which rollback and
    /// prune trust over the bare list of records.
    public var replaces: Int64?

    public enum CodingKeys: String, CodingKey {
        case format, formatVersion = "format_version", sequence, publishedAt = "published_at"
        case expiresAt = "expires_at", channel, profile, minAppVersion = "min_app_version", meta, models, prototypes, rollback, rollout, replaces
    }

    public init(
        sequence: Int64, publishedAt: String, expiresAt: String? = nil, channel: String, profile: String,
        minAppVersion: String? = nil, meta: [String: JSONValue] = [:], models: [String: ReleaseModel],
        prototypes: ReleaseModel? = nil, rollback: ReleaseRollback? = nil, rollout: Rollout? = nil, replaces: Int64? = nil
    ) {
        self.sequence = sequence
        self.publishedAt = publishedAt
        self.expiresAt = expiresAt
        self.channel = channel
        self.profile = profile
        self.minAppVersion = minAppVersion
        self.meta = meta
        self.models = models
        self.prototypes = prototypes
        self.rollback = rollback
        self.rollout = rollout
        self.replaces = replaces
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let format = try c.decode(String.self, forKey: .format)
        guard format == Self.formatName else {
            throw DecodingError.dataCorruptedError(forKey: .format, in: c, debugDescription: "format is \(format), expected \(Self.formatName)")
        }
        let version = try c.decode(Int.self, forKey: .formatVersion)
        guard version == Self.formatVersion else {
            throw DecodingError.dataCorruptedError(forKey: .formatVersion, in: c, debugDescription: "format_version \(version) is not supported (this modelcast reads \(Self.formatVersion))")
        }
        sequence = try c.decode(Int64.self, forKey: .sequence)
        publishedAt = try c.decode(String.self, forKey: .publishedAt)
        expiresAt = try c.decodeIfPresent(String.self, forKey: .expiresAt)
        channel = try c.decode(String.self, forKey: .channel)
        profile = try c.decodeIfPresent(String.self, forKey: .profile) ?? "modelcast"
        minAppVersion = try c.decodeIfPresent(String.self, forKey: .minAppVersion)
        meta = try c.decodeIfPresent([String: JSONValue].self, forKey: .meta) ?? [:]
        models = try c.decode([String: ReleaseModel].self, forKey: .models)
        prototypes = try c.decodeIfPresent(ReleaseModel.self, forKey: .prototypes)
        rollback = try c.decodeIfPresent(ReleaseRollback.self, forKey: .rollback)
        rollout = try c.decodeIfPresent(Rollout.self, forKey: .rollout)
        replaces = try c.decodeIfPresent(Int64.self, forKey: .replaces)
        // Parse, don't trust: a release that holds any value its types refuse is no release.
        do { try validate() } catch let error as ManifestValueError {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: error.description))
        }
    }

    /// How long the manifest was valid from its publish time (expires_at − published_at),
    /// or nil when it never expires. Rollback and resign keep it.
    public var validityPeriod: TimeInterval? {
        guard let expires = expiresAt.flatMap(parseTimestamp), let published = parseTimestamp(publishedAt) else { return nil }
        return expires.timeIntervalSince(published)
    }

    /// The same release content, ignoring when and in which sequence it was published:
    /// two releases with equal content make a re-publish a no-op.
    /// With `ignoringRollout`, a staged rollout of the same release counts as the same.
    public func sameContent(as other: Release, ignoringRollout: Bool = false) -> Bool {
        var a = self, b = other
        if ignoringRollout { a.rollout = nil; b.rollout = nil }
        a.sequence = 0; b.sequence = 0
        a.publishedAt = ""; b.publishedAt = ""
        a.rollback = nil; b.rollback = nil
        a.expiresAt = nil; b.expiresAt = nil
        a.replaces = nil; b.replaces = nil
        return a == b
    }

    /// Canonical JSON for the `modelcast` profile and history records: the one way a
    /// release is written (it is only ever decoded through Codable).
    public func jsonValue() -> JSONValue {
        var members: [JSONValue.Member] = [
            .init("format", .string(Self.formatName)),
            .init("format_version", .int(Int64(Self.formatVersion))),
            .init("sequence", .int(sequence)),
            .init("published_at", .string(publishedAt)),
        ]
        if let expiresAt { members.append(.init("expires_at", .string(expiresAt))) }
        members.append(.init("channel", .string(channel)))
        members.append(.init("profile", .string(profile)))
        if let minAppVersion { members.append(.init("min_app_version", .string(minAppVersion))) }
        if !meta.isEmpty { members.append(.init("meta", Self.sortedObject(meta))) }
        members.append(.init("models", .object(models.keys.sorted().map { .init($0, models[$0]!.jsonValue()) })))
        if let prototypes { members.append(.init("prototypes", prototypes.jsonValue())) }
        if let rollout { members.append(.init("rollout", rollout.jsonValue())) }
        if let rollback {
            members.append(.init("rollback", .object([
                .init("sequence", .int(rollback.sequence)),
                .init("models", .object(rollback.models.keys.sorted().map { .init($0, rollback.models[$0]!.jsonValue()) })),
            ])))
        }
        if let replaces { members.append(.init("replaces", .int(replaces))) }
        return .object(members)
    }

    public static func sortedObject(_ dictionary: [String: JSONValue]) -> JSONValue {
        .object(dictionary.keys.sorted().map { .init($0, canonical(dictionary[$0]!)) })
    }

    /// Sorts the keys of nested objects so equal content always serialises the same way.
    public static func canonical(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let members):
            return .object(members.sorted { $0.key < $1.key }.map { .init($0.key, canonical($0.value)) })
        case .array(let items): return .array(items.map(canonical))
        default: return value
        }
    }

    /// Decodes a release from JSON bytes (a history record or a `modelcast` manifest).
    public static func decode(_ data: Data, source: String) throws -> Release {
        do {
            try checkJSONDepth(data)
            return try JSONDecoder().decode(Release.self, from: data)
        } catch let error as ManifestValueError {
            throw FormatError.invalidRecord(source: "release record \(source)", reason: error.description)
        } catch {
            throw FormatError.invalidRecord(source: "release record \(source)", reason: describe(decodingError: error))
        }
    }
}

extension ReleaseModel {
    public func jsonValue() -> JSONValue {
        var members: [JSONValue.Member] = [.init("version", .string(version))]
        if let tree { members.append(.init("tree", .string(tree))) }
        members.append(.init("files", .array(files.map { file in
            var fields: [JSONValue.Member] = [.init("name", .string(file.name))]
            if let path = file.path { fields.append(.init("path", .string(path))) }
            fields += [
                .init("key", .string(file.key)),
                .init("url", .string(file.url)),
                .init("sha256", .string(file.sha256)),
                .init("size", .int(file.size)),
                .init("content_type", .string(file.contentType)),
            ]
            if let segments = file.segments {
                fields.append(.init("segments", .object([
                    .init("key", .string(segments.key)), .init("url", .string(segments.url)),
                    .init("sha256", .string(segments.sha256)), .init("size", .int(segments.size)),
                ])))
            }
            return .object(fields)
        })))
        if !meta.isEmpty { members.append(.init("meta", Release.sortedObject(meta))) }
        if let interface { members.append(.init("interface", Release.canonical(interface))) }
        if let modelSignature { members.append(.init("model_signature", modelSignature.jsonValue())) }
        if let download { members.append(.init("download", .string(download))) }
        if let licence { members.append(.init("licence", licence.jsonValue())) }
        if let downloadConditions { members.append(.init("download_conditions", downloadConditions.jsonValue())) }
        if let storage { members.append(.init("storage", storage.jsonValue())) }
        if let variant { members.append(.init("variant", .string(variant))) }
        if let variants { members.append(.init("variants", .array(variants.map { $0.jsonValue() }))) }
        return .object(members)
    }
}

/// A readable one-line account of a `DecodingError`.
public func describe(decodingError error: Error) -> String {
    guard let error = error as? DecodingError else { return String(describing: error) }
    func path(_ context: DecodingError.Context) -> String {
        context.codingPath.map(\.stringValue).joined(separator: ".")
    }
    switch error {
    case .keyNotFound(let key, let context): return "missing field \((path(context).isEmpty ? "" : path(context) + ".") + key.stringValue)"
    case .typeMismatch(_, let context): return "wrong type at \(path(context)): \(context.debugDescription)"
    case .valueNotFound(_, let context): return "missing value at \(path(context))"
    case .dataCorrupted(let context): return "\(path(context).isEmpty ? "" : path(context) + ": ")\(context.debugDescription)"
    @unknown default: return String(describing: error)
    }
}
