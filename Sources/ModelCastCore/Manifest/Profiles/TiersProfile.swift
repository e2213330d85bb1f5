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

    func checkShape(_ release: Release) throws {
        try requireModelsWithOneFileEach(release, profile: .tiers)
        let versions = Set(release.models.values.map(\.version))
        guard versions.count == 1 else {
            throw ModelCastError.usage("profile tiers has one current_version for every tier, but the models have versions \(versions.sorted().joined(separator: ", "))")
        }
    }

    func render(_ release: Release) -> JSONValue {
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
