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
    var capabilities: ProfileCapabilities {
        [.writesPrototypes, .publishesTrees, .carriesSignatureAndExpiry, .stagesRollouts, .writesVariants, .namesDefaultVariant,
         .writesSegmentIndexes, .carriesModelSignatures, .writesAnyMeta]
    }

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
        // Every object the release names (`Release.objects`, the one enumeration publish
        // proves too): artifacts with their segment indexes, model signatures, the
        // rollback section's included — a device falling back fetches those.
        var objects: [ExpectedObject] = []
        var signatures: [ModelSignatureReference] = []
        for object in release.objects {
            let prefix = object.section == .fallback ? "rollback " : ""
            let sha256 = try manifest.hex(object.sha256, "\(object.unit).\(object.kind == .modelSignature ? "model_signature" : "files").sha256")
            switch object.kind {
            case .artifact:
                let index = object.entry.files.first { $0.key == object.key }?.segments
                objects.append(ExpectedObject(
                    label: "\(prefix)\(object.unit) \(object.version)/\(object.place ?? object.key)", url: object.url, sha256: sha256, size: object.size,
                    approximateSize: nil, contentType: object.contentType,
                    segmentIndex: try index.map { SegmentIndexReference(url: $0.url, sha256: try manifest.hex($0.sha256, "\(object.unit).files.segments.sha256"), size: $0.size) }))
            case .segmentIndex:
                // Served like the artifact: immutable, its exact bytes.
                objects.append(ExpectedObject(
                    label: "\(prefix)\(object.unit) \(object.version)/\(object.place ?? object.key) segment index", url: object.url, sha256: sha256,
                    size: object.size, approximateSize: nil, contentType: object.contentType))
            case .modelSignature:
                // A bundle is served like an artifact (immutable, its exact bytes, JSON), and
                // checked against the files of the unit naming it.
                let label = "\(prefix)\(object.unit) \(object.version)"
                objects.append(ExpectedObject(label: label + " model signature", url: object.url, sha256: sha256, size: object.size,
                                              approximateSize: nil, contentType: object.contentType))
                signatures.append(ModelSignatureReference(label: label, name: object.model, model: object.entry, fallback: object.section == .fallback))
            }
        }
        var rolloutProblems = release.rollout?.problems
        if release.rollout != nil, release.rollback == nil { rolloutProblems?.append("there is no rollback section to fall back to") }
        var facts = ManifestFacts(profile: .modelcast, sequence: release.sequence, expiresAt: release.expiresAt, objects: objects, rolloutProblems: rolloutProblems)
        facts.modelSignatures = signatures
        return facts
    }
}
