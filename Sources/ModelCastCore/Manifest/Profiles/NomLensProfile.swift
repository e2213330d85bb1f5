import Foundation

/// NomLens: one model, one file — `version`, `url`, `sha256`, `num_classes`,
/// `class_list_version`, `training_date`, `size_mb`. Its client downloads whenever
/// `version` differs from the one it stored.
struct NomLensProfile: ProfileDefinition {
    var summary: String { "version, url, sha256, num_classes, class_list_version, training_date, size_mb" }
    var clientRule: String { "version equality" }
    var rollbackForm: RollbackForm { .anyDifferentVersion }
    var rollbackRule: String { "the manifest names the old version; clients download when it differs from theirs (equality)" }
    var modelFields: [ProfileField] {
        [ProfileField("num_classes", .integer), ProfileField("class_list_version", .string), ProfileField("training_date", .date)]
    }
    var computedFields: [String] { ["version", "url", "sha256", "size_mb"] }
    var capabilities: ProfileCapabilities { [] }

    func checkShape(_ release: Release) throws {
        try requireOneModelWithOneFile(release, profile: .nomlens)
    }

    func render(_ release: Release) -> JSONValue {
        let model = release.models.first!.value
        let file = model.files[0]
        return .object([
            .init("version", .string(model.version)),
            .init("url", .string(file.url)),
            .init("sha256", .string(file.sha256)),
            .init("num_classes", model.meta.value(at: "num_classes")!),
            .init("class_list_version", model.meta.value(at: "class_list_version")!),
            .init("training_date", model.meta.value(at: "training_date")!),
            .init("size_mb", .double(Self.megabytes(file.size))),
        ])
    }

    func publishWarnings(_ release: Release) -> [String] {
        guard release.models.values.first?.files.first?.contentType == "application/zip" else { return [] }
        return ["the nomlens client saves the download as-is; a zipped .mlpackage needs an unzip step in the app"]
    }

    func claims(_ json: JSONValue) -> Bool {
        json["sha256"] != nil && json["version"] != nil
    }

    func read(_ manifest: ManifestReader) throws -> ManifestFacts {
        let json = manifest.json
        let version = try manifest.string(json["version"], "version")
        let sizeMB: Double
        switch json["size_mb"] {
        case .double(let d)?: sizeMB = d
        case .int(let i)?: sizeMB = Double(i)
        default: throw manifest.fail("size_mb is missing or not a number")
        }
        _ = try manifest.integer(json["num_classes"], "num_classes")
        let bytes = Int64(sizeMB * 1_000_000)
        // size_mb is rounded to one decimal (three below 1 MB).
        let tolerance: Int64 = sizeMB >= 1 ? 50_000 : 500
        return ManifestFacts(profile: .nomlens, sequence: nil, expiresAt: nil, objects: [
            ExpectedObject(label: "model \(version)", url: try manifest.string(json["url"], "url"),
                           sha256: try manifest.hex(try manifest.string(json["sha256"], "sha256"), "sha256"), size: nil,
                           approximateSize: (bytes, tolerance), contentType: nil),
        ])
    }

    /// Size in decimal megabytes, as NomLens shows it (10.6): one decimal from 1 MB up,
    /// three below, so a small model never reads as 0.
    static func megabytes(_ bytes: Int64) -> Double {
        let mb = Double(bytes) / 1_000_000
        let scale = mb >= 1 ? 10.0 : 1000.0
        return (mb * scale).rounded() / scale
    }
}
