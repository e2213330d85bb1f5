import Foundation

/// What an app depends on in a model: the inputs it feeds, the outputs it reads, the classes
/// it names, the tokenizer and chat template it formats text with. A new model version whose
/// interface differs breaks the apps that swap it in, so publish records it in the manifest
/// (`ReleaseModel.interface`, in the form `jsonValue()` writes) and compares each new version
/// with the live one (`differences(from:)`).
package enum ModelInterface: Sendable, Equatable {
    /// A Core ML model's description (`.mlpackage`, `.mlmodel`).
    case coreML(CoreMLInterface)
    /// A GGUF model's architecture, sizes and tokenizer.
    case gguf(GGUFInterface)
    /// An ONNX graph's inputs and outputs.
    case onnx(ONNXInterface)

    /// The `format` member of the JSON form: `coreml`, `gguf` or `onnx`.
    package var format: String {
        switch self {
        case .coreML: return "coreml"
        case .gguf: return "gguf"
        case .onnx: return "onnx"
        }
    }
}

/// A protobuf enum's value (a data type, a colour space): shown by its name when this
/// modelcast knows the number, else by the number, so a model made by a newer converter
/// still has an interface.
package struct NamedCode<Names: CodeNames>: Sendable, Hashable, CustomStringConvertible {
    /// The number on the wire.
    package let code: Int64

    package init(_ code: Int64) { self.code = code }

    /// The known name for `text`, or nil.
    package init?(name text: String) {
        guard let code = Names.names.first(where: { $0.value == text })?.key else { return nil }
        self.code = code
    }

    /// The name, or nil when the number is not one this modelcast knows.
    package var name: String? { Names.names[code] }

    /// The name, or the number.
    package var description: String { name ?? String(code) }
}

/// The names of one protobuf enum's values, transcribed from its `.proto` file.
package protocol CodeNames: Sendable {
    static var names: [Int64: String] { get }
}
