import Foundation

/// The value type a profile field must have.
public enum FieldType: String, Sendable {
    case string, integer, number, boolean, stringList = "list of strings", date = "date (YYYY-MM-DD)"
}

/// A field a profile writes beyond url/hash/size, supplied with `--meta` or the config file.
public struct ProfileField: Sendable {
    /// Key inside a model's metadata; dots address nested objects (`hardware.gpu`).
    public let path: String
    public let type: FieldType
    public let required: Bool
    /// Taken from `--min-app-version` when the model does not set it.
    public let defaultsToMinAppVersion: Bool

    init(_ path: String, _ type: FieldType, required: Bool = true, defaultsToMinAppVersion: Bool = false) {
        self.path = path
        self.type = type
        self.required = required
        self.defaultsToMinAppVersion = defaultsToMinAppVersion
    }
}

/// The manifest shapes apps in the field read. Each is written byte-for-byte.
public enum ManifestProfile: String, CaseIterable, Sendable, Codable {
    /// modelcast's own versioned, multi-model, multi-file format (a superset of the others).
    case modelcast
    /// NomLens: `version`, `url`, `sha256`, `num_classes`, `class_list_version`, `training_date`, `size_mb`.
    case nomlens
    /// Tiered GGUF manifest: `current_version`, `models{tier}`, `rollback_version`, `rollback_url_<tier>`.
    case tiers
    /// Model catalog: `models{name}` with `checksum: "sha256:…"`, features, hardware; `prototypes`; `minAppVersion`.
    case catalog
    /// `{"url": …}` whose file name (content-derived) is the version.
    case latest

    /// What a client of this profile does with a version, for help and docs.
    public var clientRule: String {
        switch self {
        case .modelcast: return "accepts a manifest only with a higher sequence"
        case .nomlens: return "downloads when version differs from its stored one (equality)"
        case .tiers: return "downloads when current_version > stored version, compared as strings"
        case .catalog: return "compares each model's version with its cached one"
        case .latest: return "downloads when the file name in url is not on the device"
        }
    }

    /// Fields each model must (or may) carry in its metadata.
    public var modelFields: [ProfileField] {
        switch self {
        case .modelcast, .latest: return []
        case .nomlens:
            return [ProfileField("num_classes", .integer), ProfileField("class_list_version", .string), ProfileField("training_date", .date)]
        case .tiers:
            return [ProfileField("min_app_version", .string, defaultsToMinAppVersion: true), ProfileField("release_notes", .string)]
        case .catalog:
            return [
                ProfileField("minAppVersion", .string, defaultsToMinAppVersion: true), ProfileField("features", .stringList),
                ProfileField("hardware.neuralEngine", .boolean), ProfileField("hardware.gpu", .boolean), ProfileField("hardware.cpu", .boolean),
            ]
        }
    }

    /// Fields of the catalog's prototypes object.
    public var prototypeFields: [ProfileField] {
        self == .catalog ? [ProfileField("classes", .integer)] : []
    }

    /// The storage key for a file of a model.
    public func artifactKey(model: String, version: String, fileName: String, sha256: SHA256Digest) -> String {
        switch self {
        case .latest:
            // The file name is the version: derive it from the content, UUID-shaped like the seed's.
            let hex = Array(sha256.hex.prefix(32))
            let uuid = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(hex[$0]) }.joined(separator: "-")
            return "models/\(model)/\(uuid)\(fileExtension(of: fileName))"
        default:
            return "models/\(model)/\(version)/\(fileName)"
        }
    }

    /// `.mlpackage.zip` for `X.mlpackage.zip`, `.gguf` for `a.b.gguf` (known double extensions kept whole).
    private func fileExtension(of name: String) -> String {
        let lower = name.lowercased()
        for double in [".mlpackage.zip", ".mlmodelc.zip", ".tar.gz"] where lower.hasSuffix(double) {
            return String(name.suffix(double.count))
        }
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[dot...])
    }

    /// Checks the release has the shape and fields this profile writes; the error names
    /// the missing field and the model.
    public func validate(_ release: Release) throws {
        func single() throws -> (String, ReleaseModel) {
            guard release.models.count == 1, let (name, model) = release.models.first else {
                throw ModelCastError.usage("profile \(rawValue) publishes exactly one model, got \(release.models.count): \(release.models.keys.sorted().joined(separator: ", "))")
            }
            guard model.files.count == 1 else {
                throw ModelCastError.usage("profile \(rawValue) publishes exactly one file per model; model \(name) has \(model.files.count): \(model.files.map(\.name).joined(separator: ", "))")
            }
            return (name, model)
        }
        switch self {
        case .modelcast:
            guard !release.models.isEmpty else { throw ModelCastError.usage("nothing to publish: no models given") }
        case .nomlens, .latest:
            _ = try single()
        case .tiers, .catalog:
            guard !release.models.isEmpty else { throw ModelCastError.usage("nothing to publish: no models given") }
            for (name, model) in release.models where model.files.count != 1 {
                throw ModelCastError.usage("profile \(rawValue) publishes exactly one file per model; model \(name) has \(model.files.count): \(model.files.map(\.name).joined(separator: ", "))")
            }
            if self == .tiers {
                let versions = Set(release.models.values.map(\.version))
                guard versions.count == 1 else {
                    throw ModelCastError.usage("profile tiers has one current_version for every tier, but the models have versions \(versions.sorted().joined(separator: ", "))")
                }
            }
        }
        // Every missing field at once, so one run tells the whole story: (what, how to give it).
        var missing: [(field: String, remedy: String)] = []
        for name in release.models.keys.sorted() {
            let model = release.models[name]!
            for field in modelFields where field.required {
                if model.meta.value(at: field.path) == nil && !(field.defaultsToMinAppVersion && release.minAppVersion != nil) {
                    missing.append(("\(field.path) (\(field.type.rawValue)) for model \(name)",
                                    "--meta \(release.models.count > 1 ? "\(name):" : "")\(field.path)=VALUE"))
                }
            }
        }
        if self == .catalog {
            if release.minAppVersion == nil {
                missing.append(("the top-level minAppVersion", "--min-app-version VERSION (config: min_app_version)"))
            }
            if let prototypes = release.prototypes {
                for field in prototypeFields where prototypes.meta.value(at: field.path) == nil {
                    missing.append(("prototypes.\(field.path) (\(field.type.rawValue))", "--prototypes-classes N (config: prototypes.classes)"))
                }
            } else {
                // The PE Core client decodes `prototypes` as a required member: without it the
                // whole manifest fails to decode and the app treats updates as unavailable.
                missing.append(("prototypes, which its clients require", "--prototypes FILE (config: a prototypes section)"))
            }
        }
        if missing.count == 1 {
            throw ModelCastError.usage("profile \(rawValue) needs field \(missing[0].field): pass \(missing[0].remedy) or set it in the config file")
        } else if !missing.isEmpty {
            throw ModelCastError.usage("profile \(rawValue) needs \(missing.count) fields: " + missing.map { "\($0.field) (pass \($0.remedy))" }.joined(separator: "; ") + "; or set them in the config file")
        }
    }

    /// The `--meta` keys this profile writes for a model (every other key is refused).
    public var metaKeys: [String] { modelFields.map(\.path) }

    /// Fields this profile writes that modelcast computes from the artifact (never `--meta`).
    public var computedFields: [String] {
        switch self {
        case .modelcast: return []
        case .nomlens: return ["version", "url", "sha256", "size_mb"]
        case .tiers: return ["current_version", "url", "size_bytes", "sha256", "rollback_version"]
        case .catalog: return ["version", "url", "checksum", "size"]
        case .latest: return ["url"]
        }
    }

    /// The manifest this profile's clients read, for `release`.
    public func render(_ release: Release) throws -> JSONValue {
        try validate(release)
        switch self {
        case .modelcast:
            return release.jsonValue()
        case .latest:
            let model = release.models.first!.value
            return .object([.init("url", .string(model.files[0].url))])
        case .nomlens:
            let model = release.models.first!.value
            let file = model.files[0]
            return .object([
                .init("version", .string(model.version)),
                .init("url", .string(file.url)),
                .init("sha256", .string(file.sha256)),
                .init("num_classes", model.meta.value(at: "num_classes")!),
                .init("class_list_version", model.meta.value(at: "class_list_version")!),
                .init("training_date", model.meta.value(at: "training_date")!),
                .init("size_mb", .double(megabytes(file.size))),
            ])
        case .tiers:
            let names = release.models.keys.sorted()
            var members: [JSONValue.Member] = [.init("current_version", .string(release.models[names[0]]!.version))]
            members.append(.init("models", .object(names.map { name in
                let model = release.models[name]!
                let file = model.files[0]
                return .init(name, .object([
                    .init("url", .string(file.url)),
                    .init("size_bytes", .int(file.size)),
                    .init("sha256", .string(file.sha256)),
                    .init("min_app_version", model.meta.value(at: "min_app_version") ?? .string(release.minAppVersion!)),
                    .init("release_notes", model.meta.value(at: "release_notes")!),
                ]))
            })))
            // The previously live release, filled from the publish history.
            if let rollback = release.rollback, let first = rollback.models.values.first {
                members.append(.init("rollback_version", .string(first.version)))
                for name in names {
                    if let previous = rollback.models[name]?.files.first {
                        members.append(.init("rollback_url_\(name)", .string(previous.url)))
                    }
                }
            }
            return .object(members)
        case .catalog:
            let names = release.models.keys.sorted()
            var members: [JSONValue.Member] = [.init("models", .object(names.map { name in
                let model = release.models[name]!
                let file = model.files[0]
                return .init(name, .object([
                    .init("version", .string(model.version)),
                    .init("url", .string(file.url)),
                    .init("checksum", .string("sha256:" + file.sha256)),
                    .init("size", .int(file.size)),
                    .init("minAppVersion", model.meta.value(at: "minAppVersion") ?? .string(release.minAppVersion!)),
                    .init("features", model.meta.value(at: "features")!),
                    .init("hardware", .object(["neuralEngine", "gpu", "cpu"].map {
                        .init($0, model.meta.value(at: "hardware.\($0)")!)
                    })),
                ]))
            }))]
            if let prototypes = release.prototypes, let file = prototypes.files.first {
                members.append(.init("prototypes", .object([
                    .init("version", .string(prototypes.version)),
                    .init("url", .string(file.url)),
                    .init("checksum", .string("sha256:" + file.sha256)),
                    .init("classes", prototypes.meta.value(at: "classes")!),
                ])))
            }
            members.append(.init("minAppVersion", .string(release.minAppVersion!)))
            return .object(members)
        }
    }

    /// Size in decimal megabytes, as NomLens shows it (10.6): one decimal from 1 MB up,
    /// three below, so a small model never reads as 0.
    func megabytes(_ bytes: Int64) -> Double {
        let mb = Double(bytes) / 1_000_000
        let scale = mb >= 1 ? 10.0 : 1000.0
        return (mb * scale).rounded() / scale
    }
}

extension Dictionary where Key == String, Value == JSONValue {
    /// The value at a dotted path (`hardware.gpu`).
    func value(at path: String) -> JSONValue? {
        let parts = path.split(separator: ".").map(String.init)
        guard let first = parts.first, var current = self[first] else { return nil }
        for part in parts.dropFirst() {
            guard let next = current[part] else { return nil }
            current = next
        }
        return current
    }

    /// Sets the value at a dotted path, creating nested objects.
    mutating func set(_ value: JSONValue, at path: String) {
        let parts = path.split(separator: ".").map(String.init)
        guard let first = parts.first else { return }
        if parts.count == 1 {
            self[first] = value
            return
        }
        var nested: [String: JSONValue] = [:]
        if case .object(let members)? = self[first] {
            for member in members { nested[member.key] = member.value }
        }
        nested.set(value, at: parts.dropFirst().joined(separator: "."))
        self[first] = .object(nested.keys.sorted().map { .init($0, nested[$0]!) })
    }
}
