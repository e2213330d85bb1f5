import Foundation

/// Reads a Core ML interface's JSON form back (see `ModelInterface(json:)`): its features,
/// each of a known type with only that type's members, and its classifier.
enum CoreMLInterfaceJSONReader {
    /// The members of a Core ML interface's object besides `format`.
    static let members: Set<String> = ["inputs", "outputs", "states", "classifier"]

    static func read(_ object: InterfaceJSONObject) throws -> CoreMLInterface {
        var interface = CoreMLInterface(
            inputs: try object.namedItems("inputs", feature), outputs: try object.namedItems("outputs", feature),
            states: object.has("states") ? try object.namedItems("states", feature) : [])
        if object.has("classifier") {
            let classifier = try InterfaceJSONObject(object.value("classifier"), field: object.path("classifier"),
                                                     allowed: ["class_count", "labels_sha256", "predicted_feature", "probabilities_output"])
            let count = try classifier.count("class_count")
            guard let labels = try classifier.digest("labels_sha256") else { throw ManifestValueError(field: classifier.path("labels_sha256"), value: "(missing)", rule: "is required") }
            interface.classifier = CoreMLClassifier(
                classCount: Int(count), labelsSHA256: labels,
                predictedFeature: try classifier.optionalString("predicted_feature"),
                probabilitiesOutput: try classifier.optionalString("probabilities_output"))
        }
        return interface
    }

    /// The members of each feature type's object besides `name`, `type` and `optional`.
    static let featureMembers: [String: Set<String>] = [
        "int64": [], "double": [], "string": [],
        "image": ["width", "height", "color_space", "sizes", "size_range"],
        "multiArray": ["data_type", "shape", "shapes", "shape_range"],
        "state": ["data_type", "shape", "shapes", "shape_range"],
        "dictionary": ["key_type"],
        "sequence": ["element_type", "length"],
    ]

    /// A feature: its name, and its type with only that type's members.
    static func feature(_ value: JSONValue, field: String) throws -> (name: String, item: CoreMLFeature) {
        let kind = try InterfaceJSONObject(value, field: field, allowed: Set(featureMembers.values.flatMap { $0 }).union(["name", "type", "optional"]))
        let type = try kind.string("type")
        guard let allowed = featureMembers[type] else {
            throw InterfaceJSONObject.refuse(kind.path("type"), .string(type), "is not a Core ML feature type (\(featureMembers.keys.sorted().joined(separator: ", ")))")
        }
        let object = try InterfaceJSONObject(value, field: field, allowed: allowed.union(["name", "type", "optional"]))
        let name = try object.string("name")
        return (name, CoreMLFeature(name: name, type: try featureType(type, object), isOptional: try object.bool("optional") ?? false))
    }

    static func featureType(_ type: String, _ object: InterfaceJSONObject) throws -> CoreMLFeatureType {
        switch type {
        case "int64": return .int64
        case "double": return .double
        case "string": return .string
        case "image": return .image(try image(object))
        case "multiArray": return .multiArray(try array(object))
        case "state": return .state(try array(object))
        case "dictionary": return .dictionary(key: try scalar(object, "key_type"))
        default: return .sequence(element: try scalar(object, "element_type"), length: object.has("length") ? try range(object.value("length"), object.path("length")) : nil)
        }
    }

    static func scalar(_ object: InterfaceJSONObject, _ key: String) throws -> CoreMLScalar {
        let text = try object.string(key)
        guard let scalar = CoreMLScalar(rawValue: text) else { throw InterfaceJSONObject.refuse(object.path(key), .string(text), "is not int64 or string") }
        return scalar
    }

    static func image(_ object: InterfaceJSONObject) throws -> CoreMLImage {
        var image = CoreMLImage(width: try object.count("width"), height: try object.count("height"), colorSpace: try object.code("color_space"), flexibility: nil)
        guard !(object.has("sizes") && object.has("size_range")) else {
            throw ManifestValueError(field: object.field, value: "sizes and size_range", rule: "are exclusive")
        }
        if object.has("sizes") {
            image.flexibility = .enumerated(try dimensionLists(object, "sizes", rank: 2))
        } else if object.has("size_range") {
            let ranges = try InterfaceJSONObject(object.value("size_range"), field: object.path("size_range"), allowed: ["width", "height"])
            image.flexibility = .ranges(width: try range(ranges.value("width"), ranges.path("width")),
                                        height: try range(ranges.value("height"), ranges.path("height")))
        }
        return image
    }

    static func array(_ object: InterfaceJSONObject) throws -> CoreMLArray {
        var array = CoreMLArray(dataType: try object.code("data_type"), shape: try dimensions(object.value("shape"), object.path("shape")), flexibility: nil)
        guard !(object.has("shapes") && object.has("shape_range")) else {
            throw ManifestValueError(field: object.field, value: "shapes and shape_range", rule: "are exclusive")
        }
        if object.has("shapes") {
            array.flexibility = .enumerated(try dimensionLists(object, "shapes", rank: nil))
        } else if object.has("shape_range") {
            let items = try object.array("shape_range", limit: CoreMLFeatureReader.maxRank)
            array.flexibility = .ranges(try items.enumerated().map { try range($1, object.path("shape_range") + "[\($0)]") })
        }
        return array
    }

    /// A list of shapes (or of [width, height] sizes when `rank` is 2).
    static func dimensionLists(_ object: InterfaceJSONObject, _ key: String, rank: Int?) throws -> [[Int64]] {
        try object.array(key, limit: CoreMLFeatureReader.maxShapes).enumerated().map { index, item in
            let field = object.path(key) + "[\(index)]"
            let list = try dimensions(item, field)
            if let rank, list.count != rank { throw InterfaceJSONObject.refuse(field, item, "is not [width, height]") }
            return list
        }
    }

    static func dimensions(_ value: JSONValue, _ field: String) throws -> [Int64] {
        try InterfaceJSONObject.array(value, field: field, limit: CoreMLFeatureReader.maxRank).enumerated().map {
            try InterfaceJSONObject.count($1, field: field + "[\($0)]")
        }
    }

    /// `[lower, upper]`, upper null for unbounded.
    static func range(_ value: JSONValue, _ field: String) throws -> CoreMLSizeRange {
        let items = try InterfaceJSONObject.array(value, field: field, limit: 2)
        guard items.count == 2 else { throw InterfaceJSONObject.refuse(field, value, "is not [lower, upper]") }
        let lower = try InterfaceJSONObject.count(items[0], field: field + "[0]")
        let upper = items[1] == .null ? nil : try InterfaceJSONObject.count(items[1], field: field + "[1]")
        guard let range = CoreMLSizeRange(lower: lower, upper: upper) else { throw InterfaceJSONObject.refuse(field, value, "is an empty range") }
        return range
    }
}
