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
         .writesSegmentIndexes, .carriesModelSignatures, .writesAnyMeta, .carriesModelPolicies]
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
            _ = try manifest.hex(object.sha256, "\(object.unit).\(object.kind == .modelSignature ? "model_signature" : "files").sha256")
            if object.kind == .artifact, let index = object.artifact?.segments {
                _ = try manifest.hex(index.sha256, "\(object.unit).files.segments.sha256")
            }
            objects.append(ExpectedObject(object))
            if object.kind == .modelSignature {
                // A bundle is also checked against the files of the unit naming it.
                signatures.append(ModelSignatureReference(label: "\((object.section == .fallback ? "rollback " : ""))\(object.unit) \(object.version)",
                                                          name: object.model, model: object.entry, fallback: object.section == .fallback))
            }
        }
        var rolloutProblems = release.rollout?.problems
        if release.rollout != nil, release.rollback == nil { rolloutProblems?.append("there is no rollback section to fall back to") }
        var facts = ManifestFacts(profile: .modelcast, sequence: release.sequence, expiresAt: release.expiresAt, objects: objects, rolloutProblems: rolloutProblems)
        facts.modelSignatures = signatures
        return facts
    }
}
