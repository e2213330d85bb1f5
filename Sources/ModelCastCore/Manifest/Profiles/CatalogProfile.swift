import Foundation

/// Model catalog (the PE Core model manager): `models{name}` with `checksum: "sha256:…"`,
/// features and hardware; a required `prototypes` object; a top-level `minAppVersion`.
/// Its client compares each model's version with the one it cached.
struct CatalogProfile: ProfileDefinition {
    var summary: String { "models{name}, prototypes, minAppVersion" }
    var clientRule: String { "per-model versions" }
    var rollbackForm: RollbackForm { .anyDifferentVersion }
    var rollbackRule: String { "each model's version is compared with the cached one" }
    var modelFields: [ProfileField] {
        [
            ProfileField("minAppVersion", .string, defaultsToMinAppVersion: true), ProfileField("features", .stringList),
            ProfileField("hardware.neuralEngine", .boolean), ProfileField("hardware.gpu", .boolean), ProfileField("hardware.cpu", .boolean),
        ]
    }
    var prototypeFields: [ProfileField] { [ProfileField("classes", .integer)] }
    var computedFields: [String] { ["version", "url", "checksum", "size"] }
    var capabilities: ProfileCapabilities { [.writesPrototypes] }

    func checkShape(_ release: Release) throws {
        try requireModelsWithOneFileEach(release, profile: .catalog)
    }

    func missingReleaseFields(_ release: Release) -> [(field: String, remedy: String)] {
        var missing: [(field: String, remedy: String)] = []
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
        return missing
    }

    func render(_ release: Release) -> JSONValue {
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

    func claims(_ json: JSONValue) -> Bool {
        json["models"] != nil
    }

    func read(_ manifest: ManifestReader) throws -> ManifestFacts {
        let json = manifest.json
        guard case .object(let models)? = json["models"], !models.isEmpty else { throw manifest.fail("models is missing or empty") }
        var objects: [ExpectedObject] = []
        for model in models {
            let field = "models.\(model.key)"
            objects.append(ExpectedObject(
                label: "\(model.key) \(try manifest.string(model.value["version"], "\(field).version"))",
                url: try manifest.string(model.value["url"], "\(field).url"),
                sha256: try manifest.prefixedChecksum(model.value["checksum"], "\(field).checksum"),
                size: try manifest.integer(model.value["size"], "\(field).size"), approximateSize: nil,
                contentType: nil))
        }
        if let prototypes = json["prototypes"] {
            objects.append(ExpectedObject(
                label: "prototypes \(try manifest.string(prototypes["version"], "prototypes.version"))",
                url: try manifest.string(prototypes["url"], "prototypes.url"),
                sha256: try manifest.prefixedChecksum(prototypes["checksum"], "prototypes.checksum"), size: nil, approximateSize: nil,
                contentType: nil))
        }
        return ManifestFacts(profile: .catalog, sequence: nil, expiresAt: nil, objects: objects)
    }
}
