import Foundation

/// Reading an ONNX interface's values and types back from JSON (see `ModelInterface(json:)`).
extension ModelInterface {
    /// Members of each ONNX type's object besides `type` (and a graph value's `name`).
    static let onnxTypeMembers: [String: Set<String>] = [
        "tensor": ["element_type", "shape"], "sparse_tensor": ["element_type", "shape"],
        "sequence": ["element"], "optional": ["element"], "map": ["key_type", "value"],
        "opaque": ["opaque_domain", "opaque_name"], "unspecified": [],
    ]
    /// Nesting of element and value types read back (a sequence of maps of sequences…).
    static let maxONNXTypeDepth = 16

    static func onnxValue(_ value: JSONValue, field: String) throws -> (name: String, item: ONNXValueInfo) {
        let (object, type) = try onnxObject(value, field: field, named: true)
        let name = try object.string("name")
        return (name, ONNXValueInfo(name: name, type: try onnxType(type, object, depth: 0)))
    }

    /// The object of a type (with a `name` for a graph value) and its `type` member, checked
    /// to hold only that type's members.
    static func onnxObject(_ value: JSONValue, field: String, named: Bool) throws -> (InterfaceJSONObject, String) {
        let extra: Set<String> = named ? ["name", "type"] : ["type"]
        let any = try InterfaceJSONObject(value, field: field, allowed: Set(onnxTypeMembers.values.flatMap { $0 }).union(extra))
        let type = try any.string("type")
        guard let allowed = onnxTypeMembers[type] else {
            throw InterfaceJSONObject.refuse(any.path("type"), .string(type), "is not an ONNX type (\(onnxTypeMembers.keys.sorted().joined(separator: ", ")))")
        }
        return (try InterfaceJSONObject(value, field: field, allowed: allowed.union(extra)), type)
    }

    static func onnxType(_ type: String, _ object: InterfaceJSONObject, depth: Int) throws -> ONNXType {
        func nested(_ key: String) throws -> ONNXType {
            guard depth < maxONNXTypeDepth else { throw ManifestValueError(field: object.path(key), value: "(nested)", rule: "nests types more than \(maxONNXTypeDepth) deep") }
            let (inner, innerType) = try onnxObject(object.value(key), field: object.path(key), named: false)
            return try onnxType(innerType, inner, depth: depth + 1)
        }
        switch type {
        case "tensor": return .tensor(element: try object.code("element_type"), shape: try onnxShape(object))
        case "sparse_tensor": return .sparseTensor(element: try object.code("element_type"), shape: try onnxShape(object))
        case "sequence": return .sequence(try nested("element"))
        case "optional": return .optional(try nested("element"))
        case "map": return .map(key: try object.code("key_type"), value: try nested("value"))
        case "opaque": return .opaque(domain: try object.string("opaque_domain", empty: true), name: try object.string("opaque_name", empty: true))
        default: return .unspecified
        }
    }

    /// A shape: each dimension a whole number, a name or null (unknown); absent for an unknown rank.
    static func onnxShape(_ object: InterfaceJSONObject) throws -> [ONNXDimension]? {
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
