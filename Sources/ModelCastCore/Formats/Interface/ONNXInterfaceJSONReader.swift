import Foundation

/// Reads an ONNX interface's JSON form back (see `ModelInterface(json:)`): its graph's
/// values and their types, nested at most `maxTypeDepth` deep.
enum ONNXInterfaceJSONReader {
    /// The members of an ONNX interface's object besides `format`.
    static let members: Set<String> = ["inputs", "outputs"]

    static func read(_ object: InterfaceJSONObject) throws -> ONNXInterface {
        ONNXInterface(inputs: try object.namedItems("inputs", valueInfo), outputs: try object.namedItems("outputs", valueInfo))
    }

    /// Members of each ONNX type's object besides `type` (and a graph value's `name`).
    static let typeMembers: [String: Set<String>] = [
        "tensor": ["element_type", "shape"], "sparse_tensor": ["element_type", "shape"],
        "sequence": ["element"], "optional": ["element"], "map": ["key_type", "value"],
        "opaque": ["opaque_domain", "opaque_name"], "unspecified": [],
    ]
    /// Nesting of element and value types read back (a sequence of maps of sequences…).
    static let maxTypeDepth = 16

    static func valueInfo(_ value: JSONValue, field: String) throws -> (name: String, item: ONNXValueInfo) {
        let (object, type) = try typedObject(value, field: field, named: true)
        let name = try object.string("name")
        return (name, ONNXValueInfo(name: name, type: try valueType(type, object, depth: 0)))
    }

    /// The object of a type (with a `name` for a graph value) and its `type` member, checked
    /// to hold only that type's members.
    static func typedObject(_ value: JSONValue, field: String, named: Bool) throws -> (InterfaceJSONObject, String) {
        let extra: Set<String> = named ? ["name", "type"] : ["type"]
        let any = try InterfaceJSONObject(value, field: field, allowed: Set(typeMembers.values.flatMap { $0 }).union(extra))
        let type = try any.string("type")
        guard let allowed = typeMembers[type] else {
            throw InterfaceJSONObject.refuse(any.path("type"), .string(type), "is not an ONNX type (\(typeMembers.keys.sorted().joined(separator: ", ")))")
        }
        return (try InterfaceJSONObject(value, field: field, allowed: allowed.union(extra)), type)
    }

    static func valueType(_ type: String, _ object: InterfaceJSONObject, depth: Int) throws -> ONNXType {
        func nested(_ key: String) throws -> ONNXType {
            guard depth < maxTypeDepth else { throw ManifestValueError(field: object.path(key), value: "(nested)", rule: "nests types more than \(maxTypeDepth) deep") }
            let (inner, innerType) = try typedObject(object.value(key), field: object.path(key), named: false)
            return try valueType(innerType, inner, depth: depth + 1)
        }
        switch type {
        case "tensor": return .tensor(element: try object.code("element_type"), shape: try shape(object))
        case "sparse_tensor": return .sparseTensor(element: try object.code("element_type"), shape: try shape(object))
        case "sequence": return .sequence(try nested("element"))
        case "optional": return .optional(try nested("element"))
        case "map": return .map(key: try object.code("key_type"), value: try nested("value"))
        case "opaque": return .opaque(domain: try object.string("opaque_domain", empty: true), name: try object.string("opaque_name", empty: true))
        default: return .unspecified
        }
    }

    /// A shape: each dimension a whole number, a name or null (unknown); absent for an unknown rank.
    static func shape(_ object: InterfaceJSONObject) throws -> [ONNXDimension]? {
        guard object.has("shape") else { return nil }
        return try object.array("shape", limit: ONNXInterfaceReader.maxRank).enumerated().map { index, item in
            let field = object.path("shape") + "[\(index)]"
            switch item {
            case .null: return .unknown
            case .string: return .param(try InterfaceJSONObject.string(item, field: field))
            default: return .value(try InterfaceJSONObject.count(item, field: field))
            }
        }
    }
}
