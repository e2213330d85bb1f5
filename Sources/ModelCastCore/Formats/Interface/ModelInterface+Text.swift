import Foundation

extension ModelInterface {
    /// The interface as `inspect` shows it: (label, value) rows in model order, names from
    /// the model quoted and escaped for the terminal.
    package var textRows: [(String, String)] {
        var rows = [("format", format)]
        switch self {
        case .coreML(let interface):
            func feature(_ feature: CoreMLFeature) -> String { "\(quotedValue(feature.name)) \(InterfaceFacets(feature).summary)" }
            rows += interface.inputs.map { ("input", feature($0)) } + interface.outputs.map { ("output", feature($0)) }
                + interface.states.map { ("state", feature($0)) }
            if let classifier = interface.classifier {
                var text = "\(classifier.classCount) classes"
                if let name = classifier.predictedFeature { text += ", predicted feature \(quotedValue(name))" }
                if let name = classifier.probabilitiesOutput { text += ", probabilities \(quotedValue(name))" }
                rows.append(("classifier", text))
            }
        case .gguf(let interface):
            if let value = interface.architecture { rows.append(("architecture", quotedValue(value))) }
            if let value = interface.contextLength { rows.append(("context length", String(value))) }
            if let value = interface.embeddingLength { rows.append(("embedding length", String(value))) }
            if let value = interface.vocabularySize { rows.append(("vocabulary", "\(value) tokens")) }
            if let value = interface.tokenizerSHA256 { rows.append(("tokenizer", "sha256 \(value.hex)")) }
            if let value = interface.chatTemplateSHA256 { rows.append(("chat template", "sha256 \(value.hex)")) }
        case .onnx(let interface):
            func value(_ value: ONNXValueInfo) -> String { "\(quotedValue(value.name)) \(InterfaceFacets(value.type).summary)" }
            rows += interface.inputs.map { ("input", value($0)) } + interface.outputs.map { ("output", value($0)) }
        }
        return rows
    }
}
