import Foundation
import ModelCastFormat

/// modelcast's own versioned, multi-model, multi-file format (a superset of the others):
/// the `Release` itself, with a sequence clients never accept going down.
struct ModelcastProfile: ProfileDefinition {
    var summary: String { "our versioned format (default)" }
    var clientRule: String { "clients accept only a higher sequence" }
    var rollbackForm: RollbackForm { .higherSequence }
    var rollbackRule: String { "the manifest gets a higher sequence and names the old version; clients accept it because the sequence went up" }
    var modelFields: [ProfileField] { [] }
    var computedFields: [String] { [] }
    var writesPrototypes: Bool { true }
    var carriesSignatureAndExpiry: Bool { true }
    var publishesTrees: Bool { true }

    func checkShape(_ release: Release) throws {
        try requireModels(release)
        if let rollout = release.rollout {
            guard release.rollback != nil else {
                throw ModelCastError.usage("a rollout needs a release to fall back to (the manifest's rollback section): publish the first release without --rollout")
            }
            if let problem = rollout.problems.first { throw ModelCastError.usage("rollout: \(problem)") }
        }
    }

    func render(_ release: Release) -> JSONValue {
        release.jsonValue()
    }

    func claims(_ json: JSONValue) -> Bool {
        json["format"]?.stringValue == Release.formatName
    }

    func read(_ manifest: ManifestReader) throws -> ManifestFacts {
        let release = try Release.decode(manifest.data, source: manifest.source)
        var objects: [ExpectedObject] = []
        var seen = Set<String>()
        func add(_ model: ReleaseModel, name: String, rollback: Bool) throws {
            // A variant's files once (the model's own files are its default variant's).
            for variant in model.variants ?? [] { try add(variant.model, name: "\(name)@\(variant.name)", rollback: rollback) }
            for file in model.files where seen.insert((rollback ? "r " : "") + file.key).inserted {
                let label = "\(rollback ? "rollback " : "")\(name) \(model.version)/\(model.tree.map { $0 + "/" } ?? "")\(file.placement)"
                let indexSHA256 = try file.segments.map { try manifest.hex($0.sha256, "\(name).files.segments.sha256") }
                objects.append(ExpectedObject(
                    label: label, url: file.url, sha256: try manifest.hex(file.sha256, "\(name).files.sha256"), size: file.size, approximateSize: nil,
                    contentType: file.contentType,
                    segmentIndex: file.segments.map { SegmentIndexReference(url: $0.url, sha256: indexSHA256!, size: $0.size) }))
                // The segment index is served like the artifact: immutable, its exact bytes.
                if let segments = file.segments {
                    objects.append(ExpectedObject(
                        label: label + " segment index", url: segments.url, sha256: indexSHA256,
                        size: segments.size, approximateSize: nil, contentType: SegmentIndexObject.contentType))
                }
            }
        }
        for name in release.models.keys.sorted() { try add(release.models[name]!, name: name, rollback: false) }
        if let prototypes = release.prototypes { try add(prototypes, name: "prototypes", rollback: false) }
        for name in (release.rollback?.models.keys.sorted() ?? []) { try add(release.rollback!.models[name]!, name: name, rollback: true) }
        var rolloutProblems = release.rollout?.problems
        if release.rollout != nil, release.rollback == nil { rolloutProblems?.append("there is no rollback section to fall back to") }
        let signatures = try Self.modelSignatures(of: release, manifest: manifest, objects: &objects)
        var facts = ManifestFacts(profile: .modelcast, sequence: release.sequence, expiresAt: release.expiresAt, objects: objects, rolloutProblems: rolloutProblems)
        facts.modelSignatures = signatures
        return facts
    }

    /// Each live model version's (and variant's) signature once, also added to `objects`:
    /// a bundle is served like an artifact (immutable, its exact bytes, JSON).
    private static func modelSignatures(of release: Release, manifest: ManifestReader, objects: inout [ExpectedObject]) throws -> [ModelSignatureReference] {
        var seen = Set<String>()
        var references: [ModelSignatureReference] = []
        for name in release.models.keys.sorted() {
            for unit in release.models[name]!.units(name: name) {
                guard let signature = unit.model.modelSignature, seen.insert(signature.key).inserted else { continue }
                let label = "\(unit.label) \(unit.model.version)"
                objects.append(ExpectedObject(label: label + " model signature", url: signature.url,
                                              sha256: try manifest.hex(signature.sha256, "\(name).model_signature.sha256"), size: signature.size,
                                              approximateSize: nil, contentType: ModelSignatureObject.contentType))
                references.append(ModelSignatureReference(label: label, name: name, model: unit.model))
            }
        }
        return references
    }
}
