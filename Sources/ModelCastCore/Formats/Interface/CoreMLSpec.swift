// Field numbers of Core ML's model specification, transcribed as data from Apple's
// coremltools repository, mlmodel/format/: Model.proto, FeatureTypes.proto,
// DataStructures.proto (StringVector, Int64Vector) and MIL.proto (ML programs).
// Only the fields modelcast reads are listed; every other field is skipped by its length.

enum CoreMLSpec {
    enum Model {
        static let description: UInt32 = 2
        static let pipelineClassifier: UInt32 = 200
        static let mlProgram: UInt32 = 502
        /// The classifier model types, each with `stringClassLabels = 100` / `int64ClassLabels = 101`.
        static let classifiers: [UInt32: String] = [
            400: "glmClassifier", 401: "supportVectorClassifier", 402: "treeEnsembleClassifier",
            403: "neuralNetworkClassifier", 404: "kNearestNeighborsClassifier",
        ]
    }

    enum ModelDescription {
        static let input: UInt32 = 1, output: UInt32 = 10, predictedFeatureName: UInt32 = 11
        static let predictedProbabilitiesName: UInt32 = 12, state: UInt32 = 13
        static let functions: UInt32 = 20, defaultFunctionName: UInt32 = 21
        /// `metadata = 100`: a Metadata message.
        static let metadata: UInt32 = 100
    }

    /// Metadata `license = 4` (coremltools' `model.license`).
    enum Metadata {
        static let license: UInt32 = 4
    }

    enum FunctionDescription {
        static let name: UInt32 = 1, input: UInt32 = 2, output: UInt32 = 3
        static let predictedFeatureName: UInt32 = 4, predictedProbabilitiesName: UInt32 = 5, state: UInt32 = 6
    }

    enum FeatureDescription {
        static let name: UInt32 = 1, type: UInt32 = 3
    }

    enum FeatureType {
        static let int64Type: UInt32 = 1, doubleType: UInt32 = 2, stringType: UInt32 = 3, imageType: UInt32 = 4
        static let multiArrayType: UInt32 = 5, dictionaryType: UInt32 = 6, sequenceType: UInt32 = 7, stateType: UInt32 = 8
        static let isOptional: UInt32 = 1000
    }

    /// ImageFeatureType; its EnumeratedImageSizes holds `sizes = 1` of ImageSize
    /// (`width = 1`, `height = 2`); its ImageSizeRange `widthRange = 1`, `heightRange = 2`.
    enum ImageFeatureType {
        static let width: UInt32 = 1, height: UInt32 = 2, colorSpace: UInt32 = 3
        static let enumeratedSizes: UInt32 = 21, imageSizeRange: UInt32 = 31
    }

    enum SizeRange {
        static let lowerBound: UInt32 = 1, upperBound: UInt32 = 2
    }

    /// ArrayFeatureType; its EnumeratedShapes holds `shapes = 1` of Shape (`shape = 1`); its
    /// ShapeRange `sizeRanges = 1`.
    enum ArrayFeatureType {
        static let shape: UInt32 = 1, dataType: UInt32 = 2, enumeratedShapes: UInt32 = 21, shapeRange: UInt32 = 31
    }

    enum DictionaryFeatureType {
        static let int64KeyType: UInt32 = 1, stringKeyType: UInt32 = 2
    }

    enum SequenceFeatureType {
        static let int64Type: UInt32 = 1, stringType: UInt32 = 3, sizeRange: UInt32 = 101
    }

    enum StateFeatureType {
        static let arrayType: UInt32 = 1
    }

    /// The classifier types' labels; StringVector and Int64Vector keep theirs in `vector = 1`.
    enum Classifier {
        static let stringClassLabels: UInt32 = 100, int64ClassLabels: UInt32 = 101
    }

    /// PipelineClassifier `pipeline = 1`; Pipeline `models = 1`.
    enum Pipeline {
        static let pipeline: UInt32 = 1, models: UInt32 = 1
    }

    /// The repeated field of every one-field list message (StringVector, Int64Vector, the
    /// shape lists, MIL's Repeated* and ListValue).
    static let listValues: UInt32 = 1
    /// A protobuf map's entries: `key = 1`, `value = 2`.
    static let mapKey: UInt32 = 1, mapValue: UInt32 = 2

    /// MIL.proto: an ML program.
    enum MIL {
        /// Program `functions = 2` (map of Function).
        static let programFunctions: UInt32 = 2
        /// Function `opset = 2`, `block_specializations = 3` (map of Block).
        static let functionOpset: UInt32 = 2, functionBlocks: UInt32 = 3
        /// Block `operations = 3`.
        static let blockOperations: UInt32 = 3
        /// Operation `type = 1`, `inputs = 2` (map of Argument), `outputs = 3`, `attributes = 5` (map of Value).
        static let operationType: UInt32 = 1, operationInputs: UInt32 = 2, operationOutputs: UInt32 = 3, operationAttributes: UInt32 = 5
        /// NamedValueType `name = 1`.
        static let namedValueName: UInt32 = 1
        /// Argument `arguments = 1`; Binding `name = 1` or `value = 2`.
        static let argumentBindings: UInt32 = 1, bindingName: UInt32 = 1, bindingValue: UInt32 = 2
        /// Value `immediateValue = 3`, `blobFileValue = 5`.
        static let valueImmediate: UInt32 = 3, valueBlobFile: UInt32 = 5
        /// ImmediateValue `tensor = 1`, `list = 3`.
        static let immediateTensor: UInt32 = 1, immediateList: UInt32 = 3
        /// TensorValue `ints = 2`, `strings = 4`, `longInts = 5`.
        static let tensorInts: UInt32 = 2, tensorStrings: UInt32 = 4, tensorLongInts: UInt32 = 5
    }
}
