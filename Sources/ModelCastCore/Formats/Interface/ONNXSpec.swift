// Field numbers of ONNX's model format, transcribed as data from onnx/onnx.proto (the
// numbers onnx 1.x writes; they never change once published). Only the fields modelcast
// reads are listed; every other field (nodes, initializer data) is skipped by its length.

enum ONNXSpec {
    /// ModelProto `graph = 7`.
    static let modelGraph: UInt32 = 7
    /// ModelProto `metadata_props = 14`: StringStringEntryProto `key = 1`, `value = 2`.
    static let modelMetadataProps: UInt32 = 14, metadataKey: UInt32 = 1, metadataValue: UInt32 = 2

    enum Graph {
        static let initializer: UInt32 = 5, input: UInt32 = 11, output: UInt32 = 12, sparseInitializer: UInt32 = 15
    }

    /// TensorProto `name = 8`; SparseTensorProto `values = 1` (a TensorProto named like the initializer).
    static let tensorName: UInt32 = 8, sparseTensorValues: UInt32 = 1

    /// ValueInfoProto `name = 1`, `type = 2`.
    enum ValueInfo {
        static let name: UInt32 = 1, type: UInt32 = 2
    }

    enum TypeProto {
        static let tensorType: UInt32 = 1, sequenceType: UInt32 = 4, mapType: UInt32 = 5
        static let opaqueType: UInt32 = 7, sparseTensorType: UInt32 = 8, optionalType: UInt32 = 9
    }

    /// TypeProto.Tensor and TypeProto.SparseTensor: `elem_type = 1`, `shape = 2`.
    static let tensorElementType: UInt32 = 1, tensorShape: UInt32 = 2
    /// TypeProto.Sequence and TypeProto.Optional: `elem_type = 1`.
    static let elementType: UInt32 = 1
    /// TypeProto.Map: `key_type = 1`, `value_type = 2`.
    static let mapKeyType: UInt32 = 1, mapValueType: UInt32 = 2
    /// TypeProto.Opaque: `domain = 1`, `name = 2`.
    static let opaqueDomain: UInt32 = 1, opaqueName: UInt32 = 2
    /// TensorShapeProto `dim = 1`; its Dimension `dim_value = 1`, `dim_param = 2`.
    static let shapeDim: UInt32 = 1, dimValue: UInt32 = 1, dimParam: UInt32 = 2
}
