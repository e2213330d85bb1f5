import Foundation

/// The model formats modelcast recognises.
package enum ModelKind: String, Sendable, Codable, CaseIterable {
    /// llama.cpp / ggml GGUF file.
    case gguf
    /// Core ML package directory (`.mlpackage`).
    case mlpackage
    /// Compiled Core ML model directory (`.mlmodelc`).
    case mlmodelc
    /// Core ML model specification file (`.mlmodel`).
    case mlmodel
    /// TensorFlow Lite flatbuffer (`.tflite`).
    case tflite
    /// ONNX protobuf (`.onnx`).
    case onnx
    /// Any other file.
    case file
    /// Any other directory.
    case directory
}

/// What modelcast learned about a model on disk.
package struct ModelDescription: Sendable {
    /// The path as given.
    package let path: String
    /// Detected format.
    package let kind: ModelKind
    /// True for directory models (published as a zip).
    package let isDirectory: Bool
    /// Number of regular files (1 for a file model).
    package let fileCount: Int
    /// Total bytes of those files.
    package let totalSize: Int64
    /// Format-specific facts in display order, e.g. ("architecture", "llama").
    package let details: [(key: String, value: String)]
    /// The scanned tree, for directory models.
    package let tree: ModelTree?
    /// The licence a GGUF header declares, read with the header it is in; other formats keep
    /// theirs elsewhere in the file (`DeclaredLicence.read(_:)` reads any format's).
    var headerLicence: DeclaredLicence? = nil
}

/// Detects and validates model formats.
package enum ModelInspector {
    /// Detects the format of `path` and validates it. A file that claims a format
    /// by its extension (or, for GGUF, its magic) and fails that format's check is
    /// an error. Directory trees are scanned and refused as `ModelTree.scan` refuses.
    package static func describe(_ path: String) throws -> ModelDescription {
        guard var info = try linkStatus(path) else { throw ModelCastError.notFound(path: path) }
        if case .symlink = FileType(mode: info.st_mode) {
            // The model argument itself may be a link (e.g. `latest.gguf`); follow it once.
            guard stat(path, &info) == 0 else {
                throw ModelCastError.symlink(path: path, target: linkTarget(path))
            }
        }
        let ownName = PathText.lastComponent((path.hasSuffix("/") ? String(path.dropLast()) : path))
        // The model's own name becomes the artifact's name (and a line of `pack`'s output).
        guard !containsControlCharacter(ownName) else { throw ModelCastError.controlCharacterInName(path: path) }
        let lowerName = ownName.lowercased()
        switch FileType(mode: info.st_mode) {
        case .directory:
            return try describeDirectory(path, lowerName: lowerName)
        case .regular:
            return try describeFile(path, lowerName: lowerName, size: Int64(info.st_size))
        case .symlink:
            throw ModelCastError.symlink(path: path, target: linkTarget(path))
        case .other(let kind):
            throw ModelCastError.specialFile(path: path, kind: kind)
        }
    }

    /// A directory model: a Core ML package or compiled model (by its name, validated), or
    /// any other directory.
    private static func describeDirectory(_ path: String, lowerName: String) throws -> ModelDescription {
        let tree = try ModelTree.scan(path)
        let kind: ModelKind
        var details: [(key: String, value: String)] = []
        if lowerName.hasSuffix(".mlpackage") {
            kind = .mlpackage
            details = try CoreMLPackage.validate(directory: tree.root)
        } else if lowerName.hasSuffix(".mlmodelc") {
            kind = .mlmodelc
            details = try CoreMLCompiled.validate(directory: tree.root)
        } else {
            kind = .directory
        }
        return ModelDescription(
            path: path, kind: kind, isDirectory: true, fileCount: tree.fileCount,
            totalSize: tree.totalSize, details: details, tree: tree)
    }

    /// A file model: GGUF (by its name or magic), Core ML, ONNX or TensorFlow Lite (by its
    /// name), each checked from its first bytes; or any other file.
    private static func describeFile(_ path: String, lowerName: String, size: Int64) throws -> ModelDescription {
        let file = try FileDescriptor.openForReading(path)
        let prefix = try file.read(at: 0, count: 16)
        let kind: ModelKind
        var details: [(key: String, value: String)] = []
        var licence: DeclaredLicence?
        if lowerName.hasSuffix(".gguf") || GGUFReader.hasMagic(prefix) {
            kind = .gguf
            let summary = try GGUFReader.read(path: path)
            details = ggufDetails(summary)
            licence = summary.licence
        } else if lowerName.hasSuffix(".mlmodel") {
            kind = .mlmodel
            let version = try ProtobufSniffer.leadingVarintField(prefix, path: path, format: "Core ML (.mlmodel)", field: "specificationVersion")
            details.append(("specification_version", String(version)))
        } else if lowerName.hasSuffix(".onnx") {
            kind = .onnx
            let version = try ProtobufSniffer.leadingVarintField(prefix, path: path, format: "ONNX", field: "ir_version")
            details.append(("ir_version", String(version)))
        } else if lowerName.hasSuffix(".tflite") {
            kind = .tflite
            guard prefix.count >= 8, Array(prefix[4..<8]) == Array("TFL3".utf8) else {
                throw ModelCastError.invalidModel(path: path, format: "TensorFlow Lite", reason: "missing the TFL3 file identifier at byte 4")
            }
        } else {
            kind = .file
        }
        return ModelDescription(
            path: path, kind: kind, isDirectory: false, fileCount: 1,
            totalSize: size, details: details, tree: nil, headerLicence: licence)
    }

    /// A GGUF file's facts, read from its header and metadata.
    private static func ggufDetails(_ summary: GGUFSummary) -> [(key: String, value: String)] {
        var details: [(key: String, value: String)] = []
        details.append(("gguf_version", String(summary.version)))
        if let value = summary.architecture { details.append(("architecture", value)) }
        if let value = summary.name { details.append(("name", value)) }
        if let value = summary.quantization { details.append(("quantization", value)) }
        details.append(("tensors", String(summary.tensorCount)))
        details.append(("metadata_keys", String(summary.metadataCount)))
        details.append(("parameters", String(summary.parameterCount)))
        return details
    }
}

/// Checks the first field of a protobuf message (Core ML and ONNX both start with
/// a small varint version in field 1).
enum ProtobufSniffer {
    static func leadingVarintField(_ prefix: [UInt8], path: String, format: String, field: String) throws -> UInt64 {
        guard let tag = prefix.first else {
            throw ModelCastError.invalidModel(path: path, format: format, reason: "file is empty")
        }
        guard tag == 0x08 else {
            throw ModelCastError.invalidModel(path: path, format: format, reason: String(format: "first byte 0x%02x is not field 1 (%@) as a varint", tag, field))
        }
        var value: UInt64 = 0
        var shift: UInt64 = 0
        for byte in prefix.dropFirst().prefix(9) {
            value |= UInt64(byte & 0x7f) << shift
            if byte & 0x80 == 0 {
                guard value >= 1 && value <= 1000 else {
                    throw ModelCastError.invalidModel(path: path, format: format, reason: "implausible \(field) \(value)")
                }
                return value
            }
            shift += 7
        }
        throw ModelCastError.invalidModel(path: path, format: format, reason: "truncated \(field)")
    }
}

/// Core ML package (`.mlpackage`): `Manifest.json` names a root model item that must exist under `Data/`.
enum CoreMLPackage {
    static func validate(directory: String) throws -> [(key: String, value: String)] {
        let root = try rootModel(directory: directory)
        var details: [(key: String, value: String)] = [("root_model_identifier", root.identifier), ("root_model_path", "Data/" + root.path)]
        if let version = root.fileFormatVersion { details.insert(("file_format_version", version), at: 0) }
        return details
    }

    /// The root model `Manifest.json` names: its identifier, its path under `Data/` (relative,
    /// without `..`, and present) and the manifest's file format version.
    static func rootModel(directory: String) throws -> (identifier: String, path: String, fileFormatVersion: String?) {
        let manifestPath = directory + "/Manifest.json"
        func fail(_ reason: String) -> ModelCastError { .invalidModel(path: directory, format: "Core ML package", reason: reason) }
        guard let data = FileManager.default.contents(atPath: manifestPath) else {
            throw fail("Manifest.json is missing")
        }
        // try?: refused just below, naming the file.
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw fail("Manifest.json is not a JSON object")
        }
        guard let root = object["rootModelIdentifier"] as? String else {
            throw fail("Manifest.json has no rootModelIdentifier")
        }
        guard let items = object["itemInfoEntries"] as? [String: Any], let item = items[root] as? [String: Any] else {
            throw fail("Manifest.json itemInfoEntries has no entry for rootModelIdentifier \(root)")
        }
        guard let itemPath = item["path"] as? String else {
            throw fail("Manifest.json entry \(root) has no path")
        }
        guard !itemPath.hasPrefix("/"), !itemPath.split(separator: "/").contains("..") else {
            throw fail("Manifest.json entry \(root) has an unsafe path \(itemPath)")
        }
        var info = stat()
        guard lstat(directory + "/Data/" + itemPath, &info) == 0 else {
            throw fail("root model Data/\(itemPath) named in Manifest.json is missing")
        }
        return (root, itemPath, object["fileFormatVersion"] as? String)
    }
}

/// Compiled Core ML model (`.mlmodelc`): must hold `coremldata.bin`.
enum CoreMLCompiled {
    static func validate(directory: String) throws -> [(key: String, value: String)] {
        var info = stat()
        guard lstat(directory + "/coremldata.bin", &info) == 0 else {
            throw ModelCastError.invalidModel(path: directory, format: "compiled Core ML model", reason: "coremldata.bin is missing")
        }
        return []
    }
}
