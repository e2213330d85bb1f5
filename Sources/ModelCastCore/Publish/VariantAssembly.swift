import Foundation
import ModelCastFormat

/// A model with variants is published as units — each variant packed like a model of its
/// own, labelled `NAME@VARIANT` — and assembled here into the one manifest entry devices
/// read: the default variant's version and files (what clients that do not know variants
/// install), then every variant in preference order.
enum VariantAssembly {
    /// The release's models from the packed units (`units` and each unit's `storage`: by
    /// label). The licence and download conditions are the model's; each variant has its
    /// own storage, and the model's is its default variant's (like its files).
    static func models(of request: PublishRequest, units: [String: ReleaseModel], storage: [String: ReleaseStorage] = [:]) throws -> [String: ReleaseModel] {
        var models: [String: ReleaseModel] = [:]
        for model in request.models {
            guard !model.variants.isEmpty else {
                var entry = units[model.name]!
                entry.download = model.download?.rawValue
                try applyPolicies(of: model, to: &entry)
                entry.storage = storage[model.name]
                models[model.name] = entry
                continue
            }
            let variants = model.variants.map { variant in
                let label = PublishRequest.Model.unitLabel(model: model.name, variant: variant.name)
                var unit = units[label]!
                unit.storage = storage[label]
                return ReleaseVariant(name: variant.name, requires: variant.requires.jsonObject(), model: unit)
            }
            let own = variants.first { $0.name == model.defaultVariantName }!
            var entry = own.model
            entry.variant = own.name
            entry.variants = variants
            entry.download = model.download?.rawValue
            try applyPolicies(of: model, to: &entry)
            models[model.name] = entry
        }
        return models
    }

    /// The model-level keys: its licence and download conditions.
    private static func applyPolicies(of model: PublishRequest.Model, to entry: inout ReleaseModel) throws {
        entry.licence = try model.policies.licence(model: model.name)
        entry.downloadConditions = try model.policies.conditions(model: model.name)
    }
}
