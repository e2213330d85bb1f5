import Foundation
import ModelCastFormat

/// A model with variants is published as units — each variant packed like a model of its
/// own, labelled `NAME@VARIANT` — and assembled here into the one manifest entry devices
/// read: the default variant's version and files (what clients that do not know variants
/// install), then every variant in preference order.
enum VariantAssembly {
    /// The release's models from the packed units (`units`: by label).
    static func models(of request: PublishRequest, units: [String: ReleaseModel]) -> [String: ReleaseModel] {
        var models: [String: ReleaseModel] = [:]
        for model in request.models {
            guard !model.variants.isEmpty else {
                var entry = units[model.name]!
                entry.download = model.download?.rawValue
                models[model.name] = entry
                continue
            }
            let variants = model.variants.map { variant in
                ReleaseVariant(name: variant.name, requires: variant.requires.jsonObject(),
                               model: units[PublishRequest.Model.unitLabel(model: model.name, variant: variant.name)]!)
            }
            let own = variants.first { $0.name == model.defaultVariantName }!
            var entry = own.model
            entry.variant = own.name
            entry.variants = variants
            entry.download = model.download?.rawValue
            models[model.name] = entry
        }
        return models
    }
}
