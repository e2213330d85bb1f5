import Foundation

/// The manifest shapes apps in the field read. Each is written byte-for-byte by its own
/// type (`ModelcastProfile`, `NomLensProfile`, …, one file each); this enum names them on
/// the command line and in records, and forwards to the type.
package enum ManifestProfile: String, CaseIterable, Sendable, Codable {
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

    /// The type that defines this profile: the one place a case meets its behaviour.
    var definition: any ProfileDefinition {
        switch self {
        case .modelcast: return ModelcastProfile()
        case .nomlens: return NomLensProfile()
        case .tiers: return TiersProfile()
        case .catalog: return CatalogProfile()
        case .latest: return LatestProfile()
        }
    }

    /// The order a manifest of unknown profile is matched in: the most specific telltale
    /// fields first (a tiers manifest also has `models`, a catalog's telltale).
    static let detectionOrder: [ManifestProfile] = [.modelcast, .tiers, .catalog, .nomlens, .latest]

    /// What its manifest carries, for help.
    package var summary: String { definition.summary }
    /// How its clients decide to download, for help and docs.
    package var clientRule: String { definition.clientRule }
    /// How its clients move back to an earlier version.
    package var rollbackForm: RollbackForm { definition.rollbackForm }
    /// How its clients move back, in a sentence, for rollback's help.
    package var rollbackRule: String { definition.rollbackRule }
    /// Fields each model must (or may) carry in its metadata.
    package var modelFields: [ProfileField] { definition.modelFields }
    /// Fields of the catalog's prototypes object.
    package var prototypeFields: [ProfileField] { definition.prototypeFields }
    /// What its manifest can express and its clients act on, as its definition states.
    package var capabilities: ProfileCapabilities { definition.capabilities }
    /// Whether it writes a prototypes object.
    package var writesPrototypes: Bool { capabilities.contains(.writesPrototypes) }
    /// Whether it can name a directory's files one by one (a tree model, `--no-zip`).
    package var publishesTrees: Bool { capabilities.contains(.publishesTrees) }
    /// Whether its manifest has fields for an inline signature and `expires_at`.
    package var carriesSignatureAndExpiry: Bool { capabilities.contains(.carriesSignatureAndExpiry) }
    /// Whether its clients know the cohort rule of a staged rollout.
    package var stagesRollouts: Bool { capabilities.contains(.stagesRollouts) }
    /// Whether it writes a model's variants.
    package var writesVariants: Bool { capabilities.contains(.writesVariants) }
    /// Whether it names a default variant at the model's top level (for clients that predate variants).
    package var namesDefaultVariant: Bool { capabilities.contains(.namesDefaultVariant) }
    /// Whether its manifest names artifacts' segment indexes.
    package var writesSegmentIndexes: Bool { capabilities.contains(.writesSegmentIndexes) }
    /// Whether its manifest names model signatures.
    package var carriesModelSignatures: Bool { capabilities.contains(.carriesModelSignatures) }
    /// Whether it writes any metadata a model carries (otherwise only `metaKeys`).
    package var writesAnyMeta: Bool { capabilities.contains(.writesAnyMeta) }
    /// Whether its clients compare version strings with `>`.
    package var comparesVersionStrings: Bool { capabilities.contains(.comparesVersionStrings) }
    /// Whether its model entries carry a licence, download conditions and storage.
    package var carriesModelPolicies: Bool { capabilities.contains(.carriesModelPolicies) }
    /// What its clients would get wrong about this release, said as publish warnings.
    package func publishWarnings(_ release: Release) -> [String] { definition.publishWarnings(release) }
    /// What a rollback that keeps the old version number leaves undone on devices already on `deviceVersion`.
    package func rollbackWithoutBumpWarning(deviceVersion: String, targetVersion: String) -> String? {
        definition.rollbackWithoutBumpWarning(deviceVersion: deviceVersion, targetVersion: targetVersion)
    }
    /// The `--meta` keys this profile writes for a model (every other key is refused).
    package var metaKeys: [String] { modelFields.map(\.path) }
    /// Fields this profile writes that modelcast computes from the artifact (never `--meta`).
    package var computedFields: [String] { definition.computedFields }

    /// The storage key for a file of a model.
    package func artifactKey(model: String, version: String, fileName: String, sha256: SHA256Digest) -> String {
        definition.artifactKey(model: model, version: version, fileName: fileName, sha256: sha256)
    }

    /// True when the object's URL itself proves its content (latest's content-derived names).
    package func urlNamesContent(_ url: String, sha256: SHA256Digest) -> Bool {
        definition.urlNamesContent(url, sha256: sha256)
    }

    /// Checks the release has the shape and fields this profile writes; the error names
    /// the missing field and the model.
    package func validate(_ release: Release) throws {
        let definition = self.definition
        if !publishesTrees, let name = release.models.keys.sorted().first(where: { release.models[$0]!.tree != nil }) {
            throw ModelCastError.usage(Self.treeRefusal(profile: self, model: name))
        }
        try definition.checkShape(release)
        // Every missing field at once, so one run tells the whole story: (what, how to give it).
        var missing: [(field: String, remedy: String)] = []
        for name in release.models.keys.sorted() {
            let model = release.models[name]!
            for field in definition.modelFields where field.required {
                if model.meta.value(at: field.path) == nil && !(field.defaultsToMinAppVersion && release.minAppVersion != nil) {
                    missing.append(("\(field.path) (\(field.type.rawValue)) for model \(name)",
                                    "--meta \(release.models.count > 1 ? "\(name):" : "")\(field.path)=VALUE"))
                }
            }
        }
        missing += definition.missingReleaseFields(release)
        if missing.count == 1 {
            throw ModelCastError.usage("profile \(rawValue) needs field \(missing[0].field): pass \(missing[0].remedy) or set it in the config file")
        } else if !missing.isEmpty {
            throw ModelCastError.usage("profile \(rawValue) needs \(counted(missing.count, "field")): " + missing.map { "\($0.field) (pass \($0.remedy))" }.joined(separator: "; ") + "; or set them in the config file")
        }
    }

    /// Why a tree model cannot go into this profile's manifest, naming both.
    package static func treeRefusal(profile: ManifestProfile, model: String) -> String {
        "profile \(profile.rawValue) gives each model one URL, so model \(model) cannot be published as a tree of files (--no-zip, or layout: tree); publish it zipped, or use the modelcast profile"
    }

    /// Why `profile` refuses a model's licence, download conditions or storage.
    package static func policiesRefusal(profile: ManifestProfile, model: String) -> String {
        "profile \(profile.rawValue) cannot carry licence/download conditions/storage (model \(model)); use the modelcast profile"
    }

    /// The manifest this profile's clients read, for `release`.
    package func render(_ release: Release) throws -> JSONValue {
        try validate(release)
        return definition.render(release)
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
