import Foundation

/// A classifier's labels as they are read: counted and hashed, never kept, so a model with a
/// million classes costs no memory. Each label is hashed as an 8-byte little-endian length
/// and its UTF-8 bytes (an integer label as decimal text).
final class ClassLabelDigest {
    private(set) var count = 0
    private let hasher: SHA256Hasher

    init() throws { hasher = try SHA256Hasher() }

    func add(_ label: String) {
        let bytes = Array(label.utf8)
        withUnsafeBytes(of: UInt64(bytes.count).littleEndian) { hasher.update($0) }
        hasher.update(bytes)
        count += 1
    }

    func finish() -> (count: Int, sha256: SHA256Digest) { (count, hasher.finalize()) }
}

/// Where a Core ML classifier keeps its labels: a classifier model type's string or int64
/// label list, the last classifier of a pipeline classifier, or an ML program's `classify`
/// operation (`MILClassLabels`).
enum CoreMLClassLabels {
    /// Longest label read (bytes).
    static let maxLabelBytes = 65_536

    /// The labels of a model, nil when it is not a classifier.
    static func labels(of parts: ModelParts, function: String, in model: ProtobufReader) throws -> (count: Int, sha256: SHA256Digest)? {
        let digest = try ClassLabelDigest()
        if let classifier = parts.classifier {
            try classifierLabels(model.message(classifier.field, classifier.name), into: digest)
        } else if let field = parts.pipelineClassifier {
            guard let labels = try pipelineLabels(model.message(field, "pipelineClassifier")) else {
                throw model.fail("the pipeline classifier has no model with class labels")
            }
            return labels
        } else if let field = parts.mlProgram {
            guard try MILClassLabels.read(model.message(field, "mlProgram"), function: function, into: digest) else { return nil }
        } else {
            return nil
        }
        return digest.finish()
    }

    /// A classifier model type's labels: `stringClassLabels` or `int64ClassLabels`, each one
    /// list message whose field 1 holds the labels.
    static func classifierLabels(_ message: ProtobufReader, into digest: ClassLabelDigest) throws {
        var reader = message
        var found = false
        while let field = try reader.next() {
            switch field.number {
            case CoreMLSpec.Classifier.stringClassLabels:
                try strings(reader.message(field, "stringClassLabels"), field: CoreMLSpec.listValues, into: digest)
            case CoreMLSpec.Classifier.int64ClassLabels:
                try integers(reader.message(field, "int64ClassLabels"), field: CoreMLSpec.listValues, into: digest)
            default: continue
            }
            found = true
        }
        guard found else { throw message.fail("the classifier has no class labels") }
    }

    /// The labels of the last model of a PipelineClassifier's pipeline that has any.
    static func pipelineLabels(_ message: ProtobufReader) throws -> (count: Int, sha256: SHA256Digest)? {
        var reader = message
        var last: (count: Int, sha256: SHA256Digest)?
        while let field = try reader.next() {
            guard field.number == CoreMLSpec.Pipeline.pipeline else { continue }
            var pipeline = try reader.message(field, "pipeline")
            var index = 0
            while let entry = try pipeline.next() {
                guard entry.number == CoreMLSpec.Pipeline.models else { continue }
                let model = try pipeline.message(entry, "models[\(index)]")
                index += 1
                if let labels = try labels(of: ModelParts(model), function: "main", in: model) { last = labels }
            }
        }
        return last
    }

    /// Each string of a repeated string field.
    static func strings(_ message: ProtobufReader, field number: UInt32, into digest: ClassLabelDigest) throws {
        var reader = message
        while let field = try reader.next() {
            guard field.number == number else { continue }
            digest.add(try reader.string(field, "label \(digest.count)", limit: maxLabelBytes))
        }
    }

    /// Each integer of a repeated int64 (or int32) field, packed or not, as decimal text.
    static func integers(_ message: ProtobufReader, field number: UInt32, into digest: ClassLabelDigest) throws {
        var reader = message
        while let field = try reader.next() {
            guard field.number == number else { continue }
            try reader.forEachVarint(field, "labels") { digest.add(String(Int64(bitPattern: $0))) }
        }
    }
}
