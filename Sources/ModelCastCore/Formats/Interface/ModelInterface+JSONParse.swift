import Foundation

/// Reading the JSON form back (the live manifest's copy, hostile input): only what
/// `jsonValue()` writes is accepted, so `ModelInterface(json: i.jsonValue()) == i`.
extension ModelInterface {
    /// Parses an interface's JSON form; `field` names it in errors (`models.m.interface`).
    /// Throws `ManifestValueError` naming the offending member and value.
    package init(json: JSONValue, field: String = "interface") throws {
        let format = try InterfaceJSONObject(json, field: field, allowed: Set(Self.members.values.flatMap { $0 }).union(["format"]))
        let name = try format.string("format")
        guard let allowed = Self.members[name] else {
            throw InterfaceJSONObject.refuse(format.path("format"), .string(name), "is not a known interface format (coreml, gguf, onnx)")
        }
        let object = try InterfaceJSONObject(json, field: field, allowed: allowed.union(["format"]))
        switch name {
        case "coreml": self = .coreML(try Self.coreML(object))
        case "gguf": self = .gguf(try Self.gguf(object))
        default: self = .onnx(ONNXInterface(inputs: try Self.list(object, "inputs", Self.onnxValue),
                                            outputs: try Self.list(object, "outputs", Self.onnxValue)))
        }
    }

    /// The members each format's object may have besides `format`.
    static let members: [String: Set<String>] = [
        "coreml": ["inputs", "outputs", "states", "classifier"],
        "gguf": ["architecture", "context_length", "embedding_length", "vocabulary_size", "tokenizer_sha256", "chat_template_sha256"],
        "onnx": ["inputs", "outputs"],
    ]

    static func gguf(_ object: InterfaceJSONObject) throws -> GGUFInterface {
        GGUFInterface(
            architecture: try object.optionalString("architecture"),
            contextLength: try object.optionalCount("context_length"),
            embeddingLength: try object.optionalCount("embedding_length"),
            vocabularySize: try object.optionalCount("vocabulary_size"),
            tokenizerSHA256: try object.digest("tokenizer_sha256"),
            chatTemplateSHA256: try object.digest("chat_template_sha256"))
    }

    static func coreML(_ object: InterfaceJSONObject) throws -> CoreMLInterface {
        var interface = CoreMLInterface(
            inputs: try list(object, "inputs", coreMLFeature), outputs: try list(object, "outputs", coreMLFeature),
            states: object.has("states") ? try list(object, "states", coreMLFeature) : [])
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

    /// The features or values of a list member, each with a name no other has.
    static func list<T>(_ object: InterfaceJSONObject, _ key: String, _ read: (JSONValue, String) throws -> (name: String, item: T)) throws -> [T] {
        var names = Set<String>()
        return try object.array(key).enumerated().map { index, value in
            let field = "\(object.path(key))[\(index)]"
            let (name, item) = try read(value, field)
            guard names.insert(name).inserted else { throw ManifestValueError(field: field + ".name", value: quotedValue(name), rule: "names two items") }
            return item
        }
    }
}

extension ModelInterface {
    static let featureMembers: [String: Set<String>] = [
        "int64": [], "double": [], "string": [],
        "image": ["width", "height", "color_space", "sizes", "size_range"],
        "multiArray": ["data_type", "shape", "shapes", "shape_range"],
        "state": ["data_type", "shape", "shapes", "shape_range"],
        "dictionary": ["key_type"],
        "sequence": ["element_type", "length"],
    ]

    static func coreMLFeature(_ value: JSONValue, field: String) throws -> (name: String, item: CoreMLFeature) {
        let kind = try InterfaceJSONObject(value, field: field, allowed: Set(featureMembers.values.flatMap { $0 }).union(["name", "type", "optional"]))
        let type = try kind.string("type")
        guard let allowed = featureMembers[type] else {
            throw InterfaceJSONObject.refuse(kind.path("type"), .string(type), "is not a Core ML feature type (\(featureMembers.keys.sorted().joined(separator: ", ")))")
        }
        let object = try InterfaceJSONObject(value, field: field, allowed: allowed.union(["name", "type", "optional"]))
        let name = try object.string("name")
        let feature = CoreMLFeature(name: name, type: try coreMLType(type, object), isOptional: try object.bool("optional") ?? false)
        return (name, feature)
    }

    static func coreMLType(_ type: String, _ object: InterfaceJSONObject) throws -> CoreMLFeatureType {
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
