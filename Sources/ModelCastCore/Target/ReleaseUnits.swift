import Foundation

extension Release {
    /// Every unit with a version of its own, by label: each model without variants by its
    /// name, each variant as `NAME@VARIANT` (version rules and immutability apply per unit).
    package var unitsByLabel: [String: ReleaseModel] { Self.units(of: models) }

    /// The units of `models` (a release's, or its rollback section's) by label.
    package static func units(of models: [String: ReleaseModel]) -> [String: ReleaseModel] {
        var units: [String: ReleaseModel] = [:]
        for (name, model) in models {
            for unit in model.units(name: name) { units[unit.label] = unit.model }
        }
        return units
    }
}
