import Foundation

/// The JSON form of an interface, as it goes into a manifest (`ReleaseModel.interface`) and
/// `inspect --json`. Deterministic: object members sorted by key, inputs, outputs, states and
/// dimensions in model order; a member whose value is unknown is left out. `docs/interface-contract.md`
/// shows an example per format; `ModelInterface(json:)` reads it back.
extension ModelInterface {
    package func jsonValue() -> JSONValue {
        switch self {
        case .coreML(let interface):
            return sortedObject([
                ("format", .string(format)),
                ("inputs", .array(interface.inputs.map(InterfaceJSONWriter.json))),
                ("outputs", .array(interface.outputs.map(InterfaceJSONWriter.json))),
                ("states", interface.states.isEmpty ? nil : .array(interface.states.map(InterfaceJSONWriter.json))),
                ("classifier", interface.classifier.map(InterfaceJSONWriter.json)),
            ])
        case .gguf(let interface):
            return sortedObject([
                ("format", .string(format)),
                ("architecture", interface.architecture.map(JSONValue.string)),
                ("context_length", interface.contextLength.map(JSONValue.int)),
                ("embedding_length", interface.embeddingLength.map(JSONValue.int)),
                ("vocabulary_size", interface.vocabularySize.map(JSONValue.int)),
                ("tokenizer_sha256", interface.tokenizerSHA256.map { .string($0.hex) }),
                ("chat_template_sha256", interface.chatTemplateSHA256.map { .string($0.hex) }),
            ])
        case .onnx(let interface):
            return sortedObject([
                ("format", .string(format)),
                ("inputs", .array(interface.inputs.map(InterfaceJSONWriter.json))),
                ("outputs", .array(interface.outputs.map(InterfaceJSONWriter.json))),
            ])
        }
    }
}

/// The JSON form of each part of an interface (a feature, an ONNX type, a dimension),
/// written as `ModelInterface.jsonValue()` describes.
enum InterfaceJSONWriter {
    static func json(_ classifier: CoreMLClassifier) -> JSONValue {
        sortedObject([
            ("class_count", .int(Int64(classifier.classCount))),
            ("labels_sha256", .string(classifier.labelsSHA256.hex)),
            ("predicted_feature", classifier.predictedFeature.map(JSONValue.string)),
            ("probabilities_output", classifier.probabilitiesOutput.map(JSONValue.string)),
        ])
    }

    static func json(_ feature: CoreMLFeature) -> JSONValue {
        var members: [(String, JSONValue?)] = [("name", .string(feature.name)), ("optional", feature.isOptional ? .bool(true) : nil)]
        switch feature.type {
        case .int64: members.append(("type", .string("int64")))
        case .double: members.append(("type", .string("double")))
        case .string: members.append(("type", .string("string")))
        case .image(let image):
            members += [("type", .string("image")), ("width", .int(image.width)), ("height", .int(image.height)),
                        ("color_space", code(image.colorSpace))]
            switch image.flexibility {
            case .enumerated(let sizes): members.append(("sizes", dimensions(sizes)))
            case .ranges(let width, let height):
                members.append(("size_range", sortedObject([("width", range(width)), ("height", range(height))])))
            case nil: break
            }
        case .multiArray(let array): members += [("type", .string("multiArray"))] + json(array)
        case .state(let array): members += [("type", .string("state"))] + json(array)
        case .dictionary(let key): members += [("type", .string("dictionary")), ("key_type", .string(key.rawValue))]
        case .sequence(let element, let length):
            members += [("type", .string("sequence")), ("element_type", .string(element.rawValue)), ("length", length.map(range))]
        }
        return sortedObject(members)
    }

    static func json(_ array: CoreMLArray) -> [(String, JSONValue?)] {
        var members: [(String, JSONValue?)] = [("data_type", code(array.dataType)), ("shape", .array(array.shape.map(JSONValue.int)))]
        switch array.flexibility {
        case .enumerated(let shapes): members.append(("shapes", dimensions(shapes)))
        case .ranges(let ranges): members.append(("shape_range", .array(ranges.map(range))))
        case nil: break
        }
        return members
    }

    static func json(_ value: ONNXValueInfo) -> JSONValue {
        sortedObject([("name", .string(value.name))] + json(value.type))
    }

    /// A type's members: `type` and what that type has.
    static func json(_ type: ONNXType) -> [(String, JSONValue?)] {
        switch type {
        case .tensor(let element, let shape): return tensor("tensor", element, shape)
        case .sparseTensor(let element, let shape): return tensor("sparse_tensor", element, shape)
        case .sequence(let element): return [("type", .string("sequence")), ("element", sortedObject(json(element)))]
        case .optional(let element): return [("type", .string("optional")), ("element", sortedObject(json(element)))]
        case .map(let key, let value):
            return [("type", .string("map")), ("key_type", code(key)), ("value", sortedObject(json(value)))]
        case .opaque(let domain, let name):
            return [("type", .string("opaque")), ("opaque_domain", .string(domain)), ("opaque_name", .string(name))]
        case .unspecified: return [("type", .string("unspecified"))]
        }
    }

    static func tensor(_ type: String, _ element: NamedCode<ONNXElementTypes>, _ shape: [ONNXDimension]?) -> [(String, JSONValue?)] {
        [("type", .string(type)), ("element_type", code(element)), ("shape", shape.map { .array($0.map(json)) })]
    }

    static func json(_ dimension: ONNXDimension) -> JSONValue {
        switch dimension {
        case .value(let value): return .int(value)
        case .param(let name): return .string(name)
        case .unknown: return .null
        }
    }

    static func code<Names>(_ code: NamedCode<Names>) -> JSONValue { code.name.map(JSONValue.string) ?? .int(code.code) }

    /// `[lower, upper]`, `upper` null when unbounded.
    static func range(_ range: CoreMLSizeRange) -> JSONValue { .array([.int(range.lower), range.upper.map(JSONValue.int) ?? .null]) }

    static func dimensions(_ lists: [[Int64]]) -> JSONValue { .array(lists.map { .array($0.map(JSONValue.int)) }) }
}

/// An object of the members that have a value, sorted by key.
func sortedObject(_ members: [(String, JSONValue?)]) -> JSONValue {
    .object(members.compactMap { key, value in value.map { JSONValue.Member(key, $0) } }.sorted { $0.key < $1.key })
}
