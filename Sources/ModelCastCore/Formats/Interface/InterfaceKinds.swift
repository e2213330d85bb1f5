import Foundation

/// A model's own classification of interface facets (`interface: {compatible: […],
/// breaking: […]}` in the config file), over each facet's default kind: a team whose app
/// never tokenizes may call `tokenizer` compatible; one whose app hard-codes the chat
/// format may call `chat_template` breaking. A facet has at most one kind here: the
/// initializer refuses one listed as both.
package struct InterfaceKinds: Sendable, Equatable {
    /// The facets given a kind; the others keep their default.
    package private(set) var kinds: [InterfaceFacet: InterfaceDifference.Kind] = [:]

    /// No override: every facet its default kind.
    package init() {}

    /// `compatible` and `breaking` facets; throws naming a facet listed in both.
    package init(compatible: [InterfaceFacet], breaking: [InterfaceFacet]) throws {
        if let both = compatible.first(where: breaking.contains) {
            throw InterfaceKindsConflict(facet: both)
        }
        for facet in compatible { kinds[facet] = .compatible }
        for facet in breaking { kinds[facet] = .breaking }
    }

    package var isEmpty: Bool { kinds.isEmpty }

    /// These kinds with `other`'s over them (a variant's over its model's).
    package func overridden(by other: InterfaceKinds) -> InterfaceKinds {
        var merged = self
        merged.kinds.merge(other.kinds) { _, own in own }
        return merged
    }

    /// `difference` with the kind given here for its facet, if any. Replaces even a kind
    /// that depends on the direction of the change (a context length): the model's owner
    /// said what holds for this model.
    package func classify(_ difference: InterfaceDifference) -> InterfaceDifference {
        guard let kind = kinds[difference.facet] else { return difference }
        return InterfaceDifference(difference.facet, difference.description, kind: kind, overridden: true)
    }
}

/// A facet listed as both compatible and breaking.
package struct InterfaceKindsConflict: Error, Equatable {
    package let facet: InterfaceFacet
}
