import Foundation

/// An ONNX model's interface: its graph's inputs (those that are not initializers, i.e. not
/// weights with a default value) and outputs, in graph order.
package struct ONNXInterface: Sendable, Equatable {
    package var inputs: [ONNXValueInfo]
    package var outputs: [ONNXValueInfo]

    package init(inputs: [ONNXValueInfo], outputs: [ONNXValueInfo]) {
        self.inputs = inputs
        self.outputs = outputs
    }
}

/// A graph input or output: its name and type.
package struct ONNXValueInfo: Sendable, Equatable {
    package var name: String
    package var type: ONNXType

    package init(name: String, type: ONNXType) {
        self.name = name
        self.type = type
    }
}

/// An ONNX value's type (TypeProto).
package indirect enum ONNXType: Sendable, Equatable {
    /// A dense tensor; `shape` nil when the rank is unknown.
    case tensor(element: NamedCode<ONNXElementTypes>, shape: [ONNXDimension]?)
    case sparseTensor(element: NamedCode<ONNXElementTypes>, shape: [ONNXDimension]?)
    case sequence(ONNXType)
    case map(key: NamedCode<ONNXElementTypes>, value: ONNXType)
    case optional(ONNXType)
    /// An opaque type (a domain and name the runtime knows).
    case opaque(domain: String, name: String)
    /// No type given.
    case unspecified
}

/// One dimension of a tensor shape.
package enum ONNXDimension: Sendable, Equatable {
    /// A fixed size (`dim_value`), 0 or more.
    case value(Int64)
    /// A named symbolic size (`dim_param`), such as `batch`.
    case param(String)
    /// Neither given.
    case unknown
}

/// TensorProto.DataType.
package enum ONNXElementTypes: CodeNames {
    package static let names: [Int64: String] = [
        0: "UNDEFINED", 1: "FLOAT", 2: "UINT8", 3: "INT8", 4: "UINT16", 5: "INT16", 6: "INT32", 7: "INT64",
        8: "STRING", 9: "BOOL", 10: "FLOAT16", 11: "DOUBLE", 12: "UINT32", 13: "UINT64", 14: "COMPLEX64",
        15: "COMPLEX128", 16: "BFLOAT16", 17: "FLOAT8E4M3FN", 18: "FLOAT8E4M3FNUZ", 19: "FLOAT8E5M2",
        20: "FLOAT8E5M2FNUZ", 21: "UINT4", 22: "INT4", 23: "FLOAT4E2M1", 24: "FLOAT8E8M0", 25: "UINT2", 26: "INT2",
    ]
}
