import Foundation

/// Reads a Core ML model specification (a `.mlmodel` file, or the root model of a
/// `.mlpackage`) into its interface. Only the description and, for a classifier, its labels
/// are read; everything else (weights, layers, an ML program's other operations) is
/// skipped by its length, so a large specification costs a walk over its field headers.
enum CoreMLInterfaceReader {
    static let format = "Core ML"
    /// Inputs, outputs or states a model may have: the interface goes into every manifest.
    static let maxFeatures = 4096

    /// The interface of the specification file at `path`.
    static func read(path: String) throws -> CoreMLInterface {
        try read(ProtobufSource(path: path, format: format))
    }

    /// The interface of a specification held in memory; `path` names it in errors.
    static func read(bytes: [UInt8], path: String) throws -> CoreMLInterface {
        try read(ProtobufSource(bytes: bytes, path: path, format: format))
    }

    static func read(_ source: ProtobufSource) throws -> CoreMLInterface {
        let model = ProtobufReader(source: source, trail: "")
        let parts = try ModelParts(model)
        guard let field = parts.description else { throw model.fail("the model has no description (Model field 2)") }
        let description = try DescriptionReader.read(model.message(field, "description"))
        var interface = CoreMLInterface(inputs: description.inputs, outputs: description.outputs, states: description.states)
        if let labels = try CoreMLClassLabels.labels(of: parts, function: description.function ?? "main", in: model) {
            interface.classifier = CoreMLClassifier(
                classCount: labels.count, labelsSHA256: labels.sha256,
                predictedFeature: description.predicted, probabilitiesOutput: description.probabilities)
        }
        return interface
    }
}

/// The top-level fields of a Model message that the interface needs.
struct ModelParts {
    var description: ProtobufField?
    /// A classifier model type (GLM, SVM, tree ensemble, neural network, k-NN) and its name.
    var classifier: (field: ProtobufField, name: String)?
    var pipelineClassifier: ProtobufField?
    var mlProgram: ProtobufField?

    init(_ message: ProtobufReader) throws {
        var reader = message
        while let field = try reader.next() {
            switch field.number {
            case CoreMLSpec.Model.description:
                guard description == nil else { throw reader.fail("the model has two descriptions (Model field 2 twice)") }
                description = field
            case CoreMLSpec.Model.pipelineClassifier: pipelineClassifier = field
            case CoreMLSpec.Model.mlProgram: mlProgram = field
            case let number where CoreMLSpec.Model.classifiers[number] != nil:
                classifier = (field, CoreMLSpec.Model.classifiers[number]!)
            default: continue
            }
        }
    }
}

/// A ModelDescription's features, or those of its default function (a multi-function model).
struct DescriptionReader {
    var inputs: [CoreMLFeature] = []
    var outputs: [CoreMLFeature] = []
    var states: [CoreMLFeature] = []
    var predicted: String?
    var probabilities: String?
    /// The function whose features these are (a multi-function model's default).
    var function: String?

    /// Which field holds what: ModelDescription and FunctionDescription number them apart.
    struct Numbers {
        let input: UInt32, output: UInt32, state: UInt32, predicted: UInt32, probabilities: UInt32
        static let model = Numbers(input: 1, output: 10, state: 13, predicted: 11, probabilities: 12)
        static let function = Numbers(input: 2, output: 3, state: 6, predicted: 4, probabilities: 5)
    }

    static func read(_ message: ProtobufReader) throws -> DescriptionReader {
        var description = DescriptionReader()
        var functions: [ProtobufField] = []
        var defaultFunction: String?
        var reader = message
        while let field = try reader.next() {
            switch field.number {
            case CoreMLSpec.ModelDescription.functions: functions.append(field)
            case CoreMLSpec.ModelDescription.defaultFunctionName: defaultFunction = try reader.string(field, "defaultFunctionName")
            default: try description.take(field, of: reader, numbers: .model)
            }
        }
        guard !functions.isEmpty else { return description }
        // A multi-function model: its features are those of the default function.
        for (index, field) in functions.enumerated() {
            let function = try reader.message(field, "functions[\(index)]")
            let name = try functionName(function)
            if name == defaultFunction || (defaultFunction == nil && functions.count == 1) {
                return try readFunction(function)
            }
        }
        throw message.fail("the model has \(functions.count) functions and none is the default \(quotedValue(defaultFunction ?? ""))")
    }

    static func functionName(_ message: ProtobufReader) throws -> String {
        var reader = message
        var name = ""
        while let field = try reader.next() {
            guard field.number == CoreMLSpec.FunctionDescription.name else { continue }
            name = try reader.string(field, "name")
        }
        return name
    }

    static func readFunction(_ message: ProtobufReader) throws -> DescriptionReader {
        var description = DescriptionReader()
        description.function = try functionName(message)
        var reader = message
        while let field = try reader.next() { try description.take(field, of: reader, numbers: .function) }
        return description
    }

    /// Reads `field` if it is a feature or a predicted name.
    mutating func take(_ field: ProtobufField, of reader: ProtobufReader, numbers: Numbers) throws {
        switch field.number {
        case numbers.input: try append(&inputs, "input", field, of: reader)
        case numbers.output: try append(&outputs, "output", field, of: reader)
        case numbers.state: try append(&states, "state", field, of: reader)
        case numbers.predicted: predicted = try nonEmpty(reader.string(field, "predictedFeatureName"))
        case numbers.probabilities: probabilities = try nonEmpty(reader.string(field, "predictedProbabilitiesName"))
        default: return
        }
    }

    private func append(_ list: inout [CoreMLFeature], _ kind: String, _ field: ProtobufField, of reader: ProtobufReader) throws {
        guard list.count < CoreMLInterfaceReader.maxFeatures else {
            throw reader.fail("more than \(CoreMLInterfaceReader.maxFeatures) \(kind)s")
        }
        let feature = try CoreMLFeatureReader.feature(reader.message(field, "\(kind)[\(list.count)]"))
        guard !list.contains(where: { $0.name == feature.name }) else {
            throw reader.fail("two \(kind)s are named \(quotedValue(feature.name))")
        }
        list.append(feature)
    }

    private func nonEmpty(_ text: String) -> String? { text.isEmpty ? nil : text }
}
