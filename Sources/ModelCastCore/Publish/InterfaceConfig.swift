import Foundation

extension ConfigEntry where Place == InterfacePlace {
    /// An `interface:` mapping: each list's facets by their names (`InterfaceFacet`). A
    /// name that is no facet, a facet in both lists, or a value that is not a name or a
    /// list of names is refused naming the key's path and the value.
    func interfaceKinds() throws -> InterfaceKinds {
        let compatible = try facets(InterfacePlace.compatible)
        let breaking = try facets(InterfacePlace.breaking)
        do {
            return try InterfaceKinds(compatible: compatible, breaking: breaking)
        } catch let conflict as InterfaceKindsConflict {
            throw ConfigProblem(message: "\(path): \(quotedValue(conflict.facet.rawValue)) is both in compatible and in breaking: give it one kind")
        }
    }

    /// The facets a list names (one name, a list, or names joined by commas, as every list
    /// of names in the file); each must be a facet.
    private func facets(_ field: ConfigField<InterfacePlace>) throws -> [InterfaceFacet] {
        guard let value = node(field) else { return [] }
        return try (value.items ?? [value]).flatMap { item in
            guard let text = item.scalar?.asText else {
                let given = item.scalar.map { $0.text.isEmpty ? "empty" : quotedValue($0.text) } ?? (item.items == nil ? "a mapping" : "a list")
                throw ConfigProblem(message: "\(item.path) must be an interface facet or a list of them (\(InterfacePlace.known)), not \(given)")
            }
            return try text.split(separator: ",", omittingEmptySubsequences: false).map { part in
                let name = part.trimmingCharacters(in: .whitespaces)
                guard let facet = InterfaceFacet(rawValue: name) else {
                    throw ConfigProblem(message: "\(item.path): \(quotedValue(name)) is not an interface facet (known: \(InterfacePlace.known))")
                }
                return facet
            }
        }
    }
}

extension InterfacePlace {
    /// What `interface` must be, as its error says.
    static let shape = "a mapping with compatible and breaking, each a list of interface facets (\(known))"
    /// The facet names, as errors list them.
    static let known = InterfaceFacet.allCases.map(\.rawValue).joined(separator: ", ")
}
