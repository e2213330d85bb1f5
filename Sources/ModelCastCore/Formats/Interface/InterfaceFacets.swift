import Foundation

/// How a feature's type reads to a person: its kind (`multiArray`, `image`, `tensor`…) and
/// each property that can change (`shape 1×3×224×224`), in a fixed order. Differences compare
/// facets one by one; `summary` is the one-line form (`multiArray FLOAT32 1×3×224×224`).
struct InterfaceFacets: Equatable {
    let kind: String
    /// (name, value) pairs; "none" when a feature has no such property.
    let properties: [Property]

    struct Property: Equatable {
        let name: String
        let value: String
    }

    init(_ kind: String, _ properties: [(String, String)]) {
        self.kind = kind
        self.properties = properties.map { Property(name: $0.0, value: $0.1) }
    }

    /// The kind and each property that is set, e.g. `image 224×224 RGB`.
    var summary: String {
        ([kind] + properties.filter { $0.value != "none" && $0.name != "optional" }.map(\.value)).joined(separator: " ")
            + (properties.contains(Property(name: "optional", value: "yes")) ? " (optional)" : "")
    }

    static func dimensions(_ shape: [Int64]) -> String { shape.isEmpty ? "scalar" : shape.map(String.init).joined(separator: "×") }

    static func range(_ range: CoreMLSizeRange) -> String { "\(range.lower)…\(range.upper.map(String.init) ?? "∞")" }

    /// A Core ML feature's facets.
    init(_ feature: CoreMLFeature) {
        let optional = ("optional", feature.isOptional ? "yes" : "no")
        switch feature.type {
        case .int64, .double, .string:
            self.init(Self.scalarName(feature.type), [optional])
        case .image(let image):
            let flexible: String
            switch image.flexibility {
            case .enumerated(let sizes): flexible = "sizes " + sizes.map(Self.dimensions).joined(separator: ", ")
            case .ranges(let width, let height): flexible = "sizes \(Self.range(width))×\(Self.range(height))"
            case nil: flexible = "none"
            }
            self.init("image", [("size", "\(image.width)×\(image.height)"), ("color space", image.colorSpace.description),
                                ("flexibility", flexible), optional])
        case .multiArray(let array): self.init("multiArray", Self.array(array) + [optional])
        case .state(let array): self.init("state", Self.array(array) + [optional])
        case .dictionary(let key): self.init("dictionary", [("key type", key.rawValue), optional])
        case .sequence(let element, let length):
            self.init("sequence", [("element type", element.rawValue), ("length", length.map { "length " + Self.range($0) } ?? "none"), optional])
        }
    }

    private static func scalarName(_ type: CoreMLFeatureType) -> String {
        switch type {
        case .int64: return "int64"
        case .double: return "double"
        default: return "string"
        }
    }

    private static func array(_ array: CoreMLArray) -> [(String, String)] {
        let flexible: String
        switch array.flexibility {
        case .enumerated(let shapes): flexible = "shapes " + shapes.map(dimensions).joined(separator: ", ")
        case .ranges(let ranges): flexible = "shapes " + ranges.map(range).joined(separator: "×")
        case nil: flexible = "none"
        }
        // Core ML leaves the shape of an output empty when the model does not fix it.
        let shape = array.shape.isEmpty ? "unspecified" : dimensions(array.shape)
        return [("data type", array.dataType.description), ("shape", shape), ("flexibility", flexible)]
    }

    /// An ONNX type's facets.
    init(_ type: ONNXType) {
        switch type {
        case .tensor(let element, let shape): self.init("tensor", Self.tensor(element, shape))
        case .sparseTensor(let element, let shape): self.init("sparse_tensor", Self.tensor(element, shape))
        case .sequence(let element): self.init("sequence", [("element", "of " + InterfaceFacets(element).summary)])
        case .optional(let element): self.init("optional", [("element", InterfaceFacets(element).summary)])
        case .map(let key, let value):
            self.init("map", [("key type", key.description), ("value", "to " + InterfaceFacets(value).summary)])
        case .opaque(let domain, let name): self.init("opaque", [("opaque type", quotedValue(domain.isEmpty ? name : domain + "." + name))])
        case .unspecified: self.init("unspecified", [])
        }
    }

    private static func tensor(_ element: NamedCode<ONNXElementTypes>, _ shape: [ONNXDimension]?) -> [(String, String)] {
        let text = shape.map { dims in
            dims.isEmpty ? "scalar" : dims.map { dim -> String in
                switch dim {
                case .value(let value): return String(value)
                case .param(let name): return printable(name)
                case .unknown: return "?"
                }
            }.joined(separator: "×")
        } ?? "unknown rank"
        return [("element type", element.description), ("shape", text)]
    }
}
