import Foundation

/// Tiered GGUF manifest: one `current_version` for every tier, `models{tier}` with url,
/// size and hash, and the previously live release as `rollback_version` and
/// `rollback_url_<tier>`. Its stock client compares `current_version` with string `>`.
struct TiersProfile: ProfileDefinition {
    var summary: String { "current_version, models{tier}, rollback_*" }
    var clientRule: String { "string >" }
    var rollbackForm: RollbackForm { .higherVersionOnly }
    var rollbackRule: String {
        "current_version and rollback_version/rollback_url_<tier> name the old version, but the stock client compares current_version with string > and never goes down: use --bump, which republishes the old bytes (same objects, same SHA-256) under a new higher version every client installs"
    }
    var modelFields: [ProfileField] {
        [ProfileField("min_app_version", .string, defaultsToMinAppVersion: true), ProfileField("release_notes", .string)]
    }
    var computedFields: [String] { ["current_version", "url", "size_bytes", "sha256", "rollback_version"] }
    /// A model's variants become its tiers; the stock client compares `current_version` with string `>`.
    var capabilities: ProfileCapabilities { [.writesVariants, .comparesVersionStrings] }

    /// The tiers a release is written as: one model's variants (`models: {"1b": …, "3b": …}`
    /// from a model with variants 1b and 3b), or else each model a tier.
    static func tiers(_ models: [String: ReleaseModel]) -> [String: ReleaseModel] {
        guard models.count == 1, let variants = models.values.first?.variants, !variants.isEmpty else { return models }
        return Dictionary(variants.map { ($0.name, $0.model) }, uniquingKeysWith: { first, _ in first })
    }

    func checkShape(_ release: Release) throws {
        if release.models.count > 1, let name = release.models.keys.sorted().first(where: { release.models[$0]!.variants != nil }) {
            throw ModelCastError.usage("profile tiers writes one model's variants as its tiers, or each model as a tier, not both: model \(name) has variants beside other models")
        }
        let tiers = Self.tiers(release.models)
        try requireModelsWithOneFileEach(Release(sequence: 0, publishedAt: "", channel: release.channel, profile: release.profile, models: tiers), profile: .tiers)
        let versions = Set(tiers.values.map(\.version))
        guard versions.count == 1 else {
            throw ModelCastError.usage("profile tiers has one current_version for every tier, but the models have versions \(versions.sorted().joined(separator: ", "))")
        }
    }

    func render(_ release: Release) -> JSONValue {
        let tiers = Self.tiers(release.models)
        let names = tiers.keys.sorted()
        var members: [JSONValue.Member] = [.init("current_version", .string(tiers[names[0]]!.version))]
        members.append(.init("models", .object(names.map { name in
            let model = tiers[name]!
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
        if let rollback = release.rollback.map({ Self.tiers($0.models) }), let first = rollback.values.first {
            members.append(.init("rollback_version", .string(first.version)))
            for name in names {
                if let previous = rollback[name]?.files.first {
                    members.append(.init("rollback_url_\(name)", .string(previous.url)))
                }
            }
        }
        return .object(members)
    }

    func rollbackWithoutBumpWarning(deviceVersion: String, targetVersion: String) -> String? {
        "tiers clients compare current_version with string >: devices already on \(deviceVersion) keep it unless they act on rollback_version; --bump republishes \(targetVersion)'s bytes under a higher version every client installs"
    }

    func claims(_ json: JSONValue) -> Bool {
        json["current_version"] != nil
    }

    func read(_ manifest: ManifestReader) throws -> ManifestFacts {
        let json = manifest.json
        let version = try manifest.string(json["current_version"], "current_version")
        guard case .object(let tiers)? = json["models"], !tiers.isEmpty else { throw manifest.fail("models is missing or empty") }
        var objects: [ExpectedObject] = []
        for tier in tiers {
            let field = "models.\(tier.key)"
            objects.append(ExpectedObject(
                label: "tier \(tier.key) \(version)", url: try manifest.string(tier.value["url"], "\(field).url"),
                sha256: try manifest.hex(try manifest.string(tier.value["sha256"], "\(field).sha256"), "\(field).sha256"),
                size: try manifest.integer(tier.value["size_bytes"], "\(field).size_bytes"), approximateSize: nil,
                contentType: nil))
        }
        if case .object(let members) = json {
            let rollbackVersion = json["rollback_version"]?.stringValue ?? "?"
            for member in members where member.key.hasPrefix("rollback_url_") {
                objects.append(ExpectedObject(
                    label: "rollback tier \(member.key.dropFirst("rollback_url_".count)) \(rollbackVersion)",
                    url: try manifest.string(member.value, member.key), sha256: nil, size: nil, approximateSize: nil,
                    contentType: nil))
            }
        }
        return ManifestFacts(profile: .tiers, sequence: nil, expiresAt: nil, objects: objects)
    }
}
