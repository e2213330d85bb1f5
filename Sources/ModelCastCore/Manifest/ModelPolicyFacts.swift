import Foundation
import ModelCastFormat

/// A model entry's licence, download conditions and storage, as reports carry them in
/// JSON (history, `rollout simulate`): the manifest's own objects, under its own key names.
package struct ModelPolicyFacts: Codable, Sendable, Equatable {
    package let licence: ReleaseLicence?
    package let downloadConditions: ReleaseDownloadConditions?
    /// The model's own (for a model with variants, its default variant's).
    package let storage: ReleaseStorage?

    enum CodingKeys: String, CodingKey {
        case licence, storage
        case downloadConditions = "download_conditions"
    }

    /// The facts of `model`, nil when it has none of the three.
    package init?(_ model: ReleaseModel) {
        guard model.licence != nil || model.downloadConditions != nil || model.storage != nil else { return nil }
        licence = model.licence
        downloadConditions = model.downloadConditions
        storage = model.storage
    }

    /// A gate a device applies before it downloads: a licence or a condition.
    package var gates: Bool { licence != nil || downloadConditions != nil }

    /// Each model of `models` that has any, by name; nil when none has.
    package static func of(_ models: [String: ReleaseModel]) -> [String: ModelPolicyFacts]? {
        let facts = models.compactMapValues(ModelPolicyFacts.init)
        return facts.isEmpty ? nil : facts
    }
}
