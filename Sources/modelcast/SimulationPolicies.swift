import Foundation
import ModelCastCore

/// `rollout simulate`'s output with what a device checks before it downloads each model:
/// its licence, download conditions and storage (the candidate's and, during a rollout,
/// the fallback's). JSON: the simulation's members plus `policies` / `fallback_policies`.
struct SimulationWithPolicies<Simulation: Encodable>: Encodable {
    let simulation: Simulation
    let policies: [String: ModelPolicyFacts]?
    let fallbackPolicies: [String: ModelPolicyFacts]?

    init(_ simulation: Simulation, release: Release) {
        self.simulation = simulation
        policies = ModelPolicyFacts.of(release.models)
        fallbackPolicies = release.rollout == nil ? nil : release.rollback.flatMap { ModelPolicyFacts.of($0.models) }
    }

    enum CodingKeys: String, CodingKey {
        case policies
        case fallbackPolicies = "fallback_policies"
    }

    func encode(to encoder: Encoder) throws {
        try simulation.encode(to: encoder)
        // The same keyed container as the simulation's: its members and these form one object.
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(policies, forKey: .policies)
        try container.encodeIfPresent(fallbackPolicies, forKey: .fallbackPolicies)
    }

    /// Lines to print after the simulation's own: one per model a device gates (a licence
    /// or a condition), with its storage. Storage alone is in the JSON only: every
    /// modelcast release has it, and the text stays what it was for ungated models.
    var text: String {
        func lines(_ label: String, _ facts: [String: ModelPolicyFacts]?) -> [String] {
            guard let gated = facts?.filter(\.value.gates), !gated.isEmpty else { return [] }
            return [label] + gated.keys.sorted().map { name in
                let fact = gated[name]!
                let parts = [fact.licence.map(ModelPolicyText.licence), fact.downloadConditions.flatMap(ModelPolicyText.conditions), fact.storage.map(ModelPolicyText.storage)]
                return "  \(name): " + parts.compactMap { $0 }.joined(separator: "; ")
            }
        }
        let out = lines(fallbackPolicies == nil ? "before downloading, devices check:" : "before downloading the candidate, devices check:", policies)
            + lines("before downloading the fallback, devices check:", fallbackPolicies)
        return out.isEmpty ? "" : out.joined(separator: "\n") + "\n"
    }
}
