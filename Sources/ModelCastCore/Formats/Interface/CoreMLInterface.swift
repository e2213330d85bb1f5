import Foundation

/// A Core ML model's interface: its description's features in model order and, for a
/// classifier, its classes. For a model with several functions, those of the default one.
package struct CoreMLInterface: Sendable, Equatable {
    package var inputs: [CoreMLFeature]
    package var outputs: [CoreMLFeature]
    /// A stateful model's states (iOS 18); empty for most models.
    package var states: [CoreMLFeature]
    /// nil for a model that is not a classifier.
    package var classifier: CoreMLClassifier?

    package init(inputs: [CoreMLFeature], outputs: [CoreMLFeature], states: [CoreMLFeature] = [], classifier: CoreMLClassifier? = nil) {
        self.inputs = inputs
        self.outputs = outputs
        self.states = states
        self.classifier = classifier
    }
}

/// A classifier's classes and the outputs that report them.
package struct CoreMLClassifier: Sendable, Equatable {
    /// Number of class labels.
    package var classCount: Int
    /// SHA-256 of the labels in class order, each as an 8-byte little-endian length and its
    /// UTF-8 bytes (an integer label in decimal): a renamed or reordered class changes it.
    package var labelsSHA256: SHA256Digest
    /// The output holding the predicted class (`predictedFeatureName`), if named.
    package var predictedFeature: String?
    /// The output holding the class probabilities (`predictedProbabilitiesName`), if named.
    package var probabilitiesOutput: String?
}

/// One input, output or state of a Core ML model.
package struct CoreMLFeature: Sendable, Equatable {
    package var name: String
    package var type: CoreMLFeatureType
    /// An input the app may leave out.
    package var isOptional: Bool

    package init(name: String, type: CoreMLFeatureType, isOptional: Bool = false) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
    }
}

/// A Core ML feature's type (FeatureTypes.proto).
package enum CoreMLFeatureType: Sendable, Equatable {
    case int64
    case double
    case string
    case image(CoreMLImage)
    case multiArray(CoreMLArray)
    /// A dictionary from `key` (int64 or string) to double (a classifier's probabilities).
    case dictionary(key: CoreMLScalar)
    /// A sequence of int64 or string, with the lengths allowed when the model says.
    case sequence(element: CoreMLScalar, length: CoreMLSizeRange?)
    /// A state: a multi-array the model keeps between predictions.
    case state(CoreMLArray)
}

/// The element or key type of a dictionary or sequence.
package enum CoreMLScalar: String, Sendable, Equatable {
    case int64, string
}

/// An image feature: its default size, colour space and the other sizes it accepts.
package struct CoreMLImage: Sendable, Equatable {
    package var width: Int64
    package var height: Int64
    package var colorSpace: NamedCode<CoreMLColorSpaces>
    package var flexibility: Flexibility?

    /// The other sizes a flexible image accepts.
    package enum Flexibility: Sendable, Equatable {
        /// A list of sizes, each [width, height].
        case enumerated([[Int64]])
        case ranges(width: CoreMLSizeRange, height: CoreMLSizeRange)
    }
}

/// A multi-array feature: its element type, default shape and the other shapes it accepts.
package struct CoreMLArray: Sendable, Equatable {
    package var dataType: NamedCode<CoreMLArrayDataTypes>
    package var shape: [Int64]
    package var flexibility: Flexibility?

    /// The other shapes a flexible multi-array accepts.
    package enum Flexibility: Sendable, Equatable {
        case enumerated([[Int64]])
        /// One range per dimension.
        case ranges([CoreMLSizeRange])
    }
}

/// An inclusive range of sizes; `upper` nil is unbounded.
package struct CoreMLSizeRange: Sendable, Equatable {
    package var lower: Int64
    package var upper: Int64?

    /// nil when `lower` is negative or above a bounded `upper`.
    package init?(lower: Int64, upper: Int64?) {
        guard lower >= 0, upper.map({ $0 >= lower }) ?? true else { return nil }
        self.lower = lower
        self.upper = upper
    }
}

/// ImageFeatureType.ColorSpace.
package enum CoreMLColorSpaces: CodeNames {
    package static let names: [Int64: String] = [10: "GRAYSCALE", 20: "RGB", 30: "BGR", 40: "GRAYSCALE_FLOAT16"]
}

/// ArrayFeatureType.ArrayDataType.
package enum CoreMLArrayDataTypes: CodeNames {
    package static let names: [Int64: String] = [65568: "FLOAT32", 65600: "DOUBLE", 131104: "INT32", 131080: "INT8", 65552: "FLOAT16"]
}
