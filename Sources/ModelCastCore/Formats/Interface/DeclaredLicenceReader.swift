import Foundation

extension DeclaredLicence {
    /// The licence the model file declares, nil when it declares none or its format has no
    /// place for one: GGUF `general.license` (with `.name` and `.link`), Core ML's metadata
    /// licence (a `.mlmodel`, or a `.mlpackage`'s root model), ONNX's `license` metadata
    /// property. A GGUF's was read with its header; a protobuf's is found by walking field
    /// headers (weights and graphs are skipped by their length). A licence field of an
    /// unexpected wire type is no licence; a message that does not parse is refused
    /// (`ModelCastError.invalidModel`) naming the file.
    package static func read(_ model: ModelDescription) throws -> DeclaredLicence? {
        switch model.kind {
        case .gguf:
            return model.headerLicence
        case .mlmodel:
            return try coreML(ProtobufSource(path: model.path, format: CoreMLInterfaceReader.format))
        case .mlpackage:
            let root = try CoreMLPackage.rootModel(directory: model.path)
            return try coreML(ProtobufSource(path: model.path + "/Data/" + root.path, format: CoreMLInterfaceReader.format))
        case .onnx:
            return try onnx(ProtobufSource(path: model.path, format: ONNXInterfaceReader.format))
        case .mlmodelc, .tflite, .file, .directory:
            return nil
        }
    }

    /// `read(_:)` with a file whose licence cannot be read kept as a failure, not thrown:
    /// `inspect` shows why and goes on. Other errors (an I/O failure) are thrown.
    package static func readResult(_ model: ModelDescription) throws -> Result<DeclaredLicence, ModelCastError>? {
        do {
            return try read(model).map { .success($0) }
        } catch let error as ModelCastError {
            guard case .invalidModel = error else { throw error }
            return .failure(error)
        }
    }

    /// Model `description = 2` → ModelDescription `metadata = 100` → Metadata `license = 4`;
    /// the last occurrence of each wins, as protobuf's own parsers merge them.
    static func coreML(_ source: ProtobufSource) throws -> DeclaredLicence? {
        var model = ProtobufReader(source: source, trail: "")
        var licence: String?
        while let field = try model.next() {
            guard field.number == CoreMLSpec.Model.description, case .bytes = field.value else { continue }
            var description = try model.message(field, "description")
            while let part = try description.next() {
                guard part.number == CoreMLSpec.ModelDescription.metadata, case .bytes = part.value else { continue }
                var metadata = try description.message(part, "metadata")
                while let entry = try metadata.next() {
                    guard entry.number == CoreMLSpec.Metadata.license else { continue }
                    licence = try metadata.shownText(entry) ?? licence
                }
            }
        }
        return DeclaredLicence(text: licence)
    }

    /// ModelProto `metadata_props` whose key is `license` (or `licence`, any case).
    static func onnx(_ source: ProtobufSource) throws -> DeclaredLicence? {
        var model = ProtobufReader(source: source, trail: "")
        var licence: String?
        while let field = try model.next() {
            guard field.number == ONNXSpec.modelMetadataProps, case .bytes = field.value else { continue }
            var entry = try model.message(field, "metadata_props")
            var key: String?
            var value: String?
            while let part = try entry.next() {
                switch part.number {
                case ONNXSpec.metadataKey: key = try entry.shownText(part)
                case ONNXSpec.metadataValue: value = try entry.shownText(part)
                default: continue
                }
            }
            if let key, ["license", "licence"].contains(key.lowercased()), let value { licence = value }
        }
        return DeclaredLicence(text: licence)
    }
}

extension ProtobufReader {
    /// The start of a string field as text to show: at most enough bytes for
    /// `DeclaredLicence.maxLength` characters (a longer value is cut when shown anyway),
    /// bytes that are not UTF-8 replaced. nil for a field that is not length-delimited.
    fileprivate func shownText(_ field: ProtobufField) throws -> String? {
        guard case .bytes(let span) = field.value else { return nil }
        // Four bytes per character at most, and one more so a cut value still reads as cut.
        let count = Int(min(span.count, UInt64(4 * DeclaredLicence.maxLength + 4)))
        let bytes = try source.bytes(at: span.start, count: count)
        return String(decoding: bytes, as: UTF8.self)
    }
}
