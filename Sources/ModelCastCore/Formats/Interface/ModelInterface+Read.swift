import Foundation

extension ModelInterface {
    /// The interface of the model at `path` (a file or directory), detected and validated as
    /// `ModelInspector.describe` does first. nil for a format whose interface modelcast does
    /// not read (a compiled `.mlmodelc`, TensorFlow Lite, any other file or directory).
    /// Throws `ModelCastError.invalidModel` naming the file when a format's interface cannot
    /// be read (a protobuf that does not parse, a GGUF key of the wrong type…).
    package static func read(path: String) throws -> ModelInterface? {
        try read(ModelInspector.describe(path))
    }

    /// The interface of a model already described (what publish and inspect hold).
    package static func read(_ model: ModelDescription) throws -> ModelInterface? {
        switch model.kind {
        case .gguf:
            return .gguf(try GGUFReader.readInterface(path: model.path))
        case .mlmodel:
            return .coreML(try CoreMLInterfaceReader.read(path: model.path))
        case .mlpackage:
            let root = try CoreMLPackage.rootModel(directory: model.path)
            return .coreML(try CoreMLInterfaceReader.read(path: model.path + "/Data/" + root.path))
        case .onnx:
            return .onnx(try ONNXInterfaceReader.read(path: model.path))
        case .mlmodelc, .tflite, .file, .directory:
            return nil
        }
    }
}

extension ModelInterface {
    /// `read(_:)` with a model whose interface cannot be read kept as a failure, not thrown:
    /// `inspect` shows why and goes on. Other errors (an I/O failure) are thrown.
    package static func readResult(_ model: ModelDescription) throws -> Result<ModelInterface, ModelCastError>? {
        do {
            return try read(model).map { .success($0) }
        } catch let error as ModelCastError {
            guard case .invalidModel = error else { throw error }
            return .failure(error)
        }
    }
}
