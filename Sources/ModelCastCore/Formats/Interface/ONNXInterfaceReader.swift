import Foundation

/// Reads an ONNX model's interface: its graph's inputs that are not initializers, and its
/// outputs, each with its type. Initializers are read only as far as their names; their
/// data, the nodes and everything else are skipped by their length.
enum ONNXInterfaceReader {
    static let format = "ONNX"
    /// Inputs or outputs a graph may have: the interface goes into every manifest.
    static let maxValues = 4096
    /// Dimensions of one shape.
    static let maxRank = 64

    /// The interface of the ONNX file at `path`.
    static func read(path: String) throws -> ONNXInterface {
        try read(ProtobufSource(path: path, format: format))
    }

    /// The interface of an ONNX model held in memory; `path` names it in errors.
    static func read(bytes: [UInt8], path: String) throws -> ONNXInterface {
        try read(ProtobufSource(bytes: bytes, path: path, format: format))
    }

    static func read(_ source: ProtobufSource) throws -> ONNXInterface {
        var model = ProtobufReader(source: source, trail: "")
        var graph: ProtobufField?
        while let field = try model.next() {
            guard field.number == ONNXSpec.modelGraph else { continue }
            guard graph == nil else { throw model.fail("the model has two graphs (ModelProto field 7 twice)") }
            graph = field
        }
        guard let graph else { throw model.fail("the model has no graph (ModelProto field 7)") }
        return try readGraph(model.message(graph, "graph"))
    }

    static func readGraph(_ message: ProtobufReader) throws -> ONNXInterface {
        var reader = message
        var inputs: [ONNXValueInfo] = []
        var outputs: [ONNXValueInfo] = []
        var initializers = Set<String>()
        while let field = try reader.next() {
            switch field.number {
            case ONNXSpec.Graph.input: try append(&inputs, "input", field, of: reader)
            case ONNXSpec.Graph.output: try append(&outputs, "output", field, of: reader)
            case ONNXSpec.Graph.initializer:
                initializers.insert(try tensorName(reader.message(field, "initializer")))
            case ONNXSpec.Graph.sparseInitializer:
                var sparse = try reader.message(field, "sparse_initializer")
                while let part = try sparse.next() {
                    guard part.number == ONNXSpec.sparseTensorValues else { continue }
                    initializers.insert(try tensorName(sparse.message(part, "values")))
                }
            default: continue
            }
        }
        // An input that is also an initializer is a weight with a default value, not
        // something an app feeds.
        return ONNXInterface(inputs: inputs.filter { !initializers.contains($0.name) }, outputs: outputs)
    }

    static func append(_ list: inout [ONNXValueInfo], _ kind: String, _ field: ProtobufField, of reader: ProtobufReader) throws {
        guard list.count < maxValues else { throw reader.fail("more than \(maxValues) \(kind)s") }
        let value = try valueInfo(reader.message(field, "\(kind)[\(list.count)]"))
        guard !list.contains(where: { $0.name == value.name }) else {
            throw reader.fail("two graph \(kind)s are named \(quotedValue(value.name))")
        }
        list.append(value)
    }

    static func tensorName(_ message: ProtobufReader) throws -> String {
        var reader = message
        var name = ""
        while let field = try reader.next() {
            if field.number == ONNXSpec.tensorName { name = try reader.string(field, "name") }
        }
        return name
    }

    /// A ValueInfoProto: a name (not empty) and a type.
    static func valueInfo(_ message: ProtobufReader) throws -> ONNXValueInfo {
        var reader = message
        var name = ""
        var type = ONNXType.unspecified
        while let field = try reader.next() {
            switch field.number {
            case ONNXSpec.ValueInfo.name: name = try reader.string(field, "name")
            case ONNXSpec.ValueInfo.type: type = try self.type(reader.message(field, "type"))
            default: continue
            }
        }
        guard !name.isEmpty else { throw message.fail("the value has no name") }
        return ONNXValueInfo(name: name, type: type)
    }
}

extension ONNXInterfaceReader {
    /// A TypeProto (the last of its oneof's fields that is set, as protobuf reads a oneof).
    static func type(_ message: ProtobufReader) throws -> ONNXType {
        var reader = message
        var type = ONNXType.unspecified
        let T = ONNXSpec.TypeProto.self
        while let field = try reader.next() {
            switch field.number {
            case T.tensorType:
                let (element, shape) = try tensor(reader.message(field, "tensor_type"))
                type = .tensor(element: element, shape: shape)
            case T.sparseTensorType:
                let (element, shape) = try tensor(reader.message(field, "sparse_tensor_type"))
                type = .sparseTensor(element: element, shape: shape)
            case T.sequenceType: type = .sequence(try elementType(reader.message(field, "sequence_type")))
            case T.optionalType: type = .optional(try elementType(reader.message(field, "optional_type")))
            case T.mapType: type = try map(reader.message(field, "map_type"))
            case T.opaqueType: type = try opaque(reader.message(field, "opaque_type"))
            default: continue
            }
        }
        return type
    }

    /// A tensor type's element type and shape (nil: rank unknown).
    static func tensor(_ message: ProtobufReader) throws -> (NamedCode<ONNXElementTypes>, [ONNXDimension]?) {
        var reader = message
        var element = NamedCode<ONNXElementTypes>(0)
        var shape: [ONNXDimension]?
        while let field = try reader.next() {
            switch field.number {
            case ONNXSpec.tensorElementType: element = NamedCode(try reader.int64(field, "elem_type"))
            case ONNXSpec.tensorShape: shape = try self.shape(reader.message(field, "shape"))
            default: continue
            }
        }
        return (element, shape)
    }

    static func shape(_ message: ProtobufReader) throws -> [ONNXDimension] {
        var reader = message
        var dimensions: [ONNXDimension] = []
        while let field = try reader.next() {
            guard field.number == ONNXSpec.shapeDim else { continue }
            guard dimensions.count < maxRank else { throw reader.fail("more than \(maxRank) dimensions") }
            var dim = try reader.message(field, "dim[\(dimensions.count)]")
            var dimension = ONNXDimension.unknown
            while let part = try dim.next() {
                switch part.number {
                case ONNXSpec.dimValue:
                    let value = try dim.int64(part, "dim_value")
                    guard value >= 0 else { throw dim.fail("dim_value \(value) is negative") }
                    dimension = .value(value)
                case ONNXSpec.dimParam:
                    let name = try dim.string(part, "dim_param")
                    dimension = name.isEmpty ? .unknown : .param(name)
                default: continue
                }
            }
            dimensions.append(dimension)
        }
        return dimensions
    }

    /// A sequence's or optional's element type.
    static func elementType(_ message: ProtobufReader) throws -> ONNXType {
        var reader = message
        var type = ONNXType.unspecified
        while let field = try reader.next() {
            if field.number == ONNXSpec.elementType { type = try self.type(reader.message(field, "elem_type")) }
        }
        return type
    }

    static func map(_ message: ProtobufReader) throws -> ONNXType {
        var reader = message
        var key = NamedCode<ONNXElementTypes>(0)
        var value = ONNXType.unspecified
        while let field = try reader.next() {
            switch field.number {
            case ONNXSpec.mapKeyType: key = NamedCode(try reader.int64(field, "key_type"))
            case ONNXSpec.mapValueType: value = try type(reader.message(field, "value_type"))
            default: continue
            }
        }
        return .map(key: key, value: value)
    }

    static func opaque(_ message: ProtobufReader) throws -> ONNXType {
        var reader = message
        var domain = ""
        var name = ""
        while let field = try reader.next() {
            switch field.number {
            case ONNXSpec.opaqueDomain: domain = try reader.string(field, "domain")
            case ONNXSpec.opaqueName: name = try reader.string(field, "name")
            default: continue
            }
        }
        return .opaque(domain: domain, name: name)
    }
}
