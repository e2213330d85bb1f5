import Foundation

/// Reads Core ML FeatureDescription and FeatureType messages into `CoreMLFeature` values:
/// names are UTF-8 and not empty, sizes and dimensions 0 or more, ranks and shape lists
/// bounded, so the interface stays small whatever the file says.
enum CoreMLFeatureReader {
    typealias Spec = CoreMLSpec
    /// Dimensions of one shape (numpy's limit).
    static let maxRank = 64
    /// Shapes or sizes a flexible feature may list.
    static let maxShapes = 1024

    /// A FeatureDescription: its name and type.
    static func feature(_ message: ProtobufReader) throws -> CoreMLFeature {
        var reader = message
        var name: String?
        var type: (CoreMLFeatureType, Bool)?
        while let field = try reader.next() {
            switch field.number {
            case Spec.FeatureDescription.name: name = try reader.string(field, "name")
            case Spec.FeatureDescription.type: type = try featureType(reader.message(field, "type"))
            default: continue
            }
        }
        guard let name, !name.isEmpty else { throw message.fail("the feature has no name") }
        guard let type else { throw message.fail("feature \(quotedValue(name)) has no type") }
        return CoreMLFeature(name: name, type: type.0, isOptional: type.1)
    }

    /// A FeatureType: one of its types, and whether it is optional.
    static func featureType(_ message: ProtobufReader) throws -> (CoreMLFeatureType, Bool) {
        var reader = message
        var type: CoreMLFeatureType?
        var optional = false
        var unknown: [UInt32] = []
        let T = Spec.FeatureType.self
        while let field = try reader.next() {
            switch field.number {
            case T.int64Type: type = .int64
            case T.doubleType: type = .double
            case T.stringType: type = .string
            case T.imageType: type = .image(try image(reader.message(field, "imageType")))
            case T.multiArrayType: type = .multiArray(try array(reader.message(field, "multiArrayType")))
            case T.dictionaryType: type = .dictionary(key: try scalar(reader.message(field, "dictionaryType"), int64: 1, string: 2))
            case T.sequenceType: type = try sequence(reader.message(field, "sequenceType"))
            case T.stateType: type = try state(reader.message(field, "stateType"))
            case T.isOptional: optional = try reader.varint(field, "isOptional") != 0
            default: unknown.append(field.number)
            }
        }
        guard let type else {
            throw message.fail(unknown.isEmpty ? "no type is set" : "type field \(unknown[0]) is one this modelcast does not know (a newer Core ML?)")
        }
        return (type, optional)
    }

    /// An ImageFeatureType.
    static func image(_ message: ProtobufReader) throws -> CoreMLImage {
        var reader = message
        let I = Spec.ImageFeatureType.self
        var image = CoreMLImage(width: 0, height: 0, colorSpace: NamedCode(0), flexibility: nil)
        while let field = try reader.next() {
            switch field.number {
            case I.width: image.width = try size(reader, field, "width")
            case I.height: image.height = try size(reader, field, "height")
            case I.colorSpace: image.colorSpace = NamedCode(try reader.int64(field, "colorSpace"))
            case I.enumeratedSizes:
                let sizes = try list(reader.message(field, "enumeratedSizes"), "sizes") { entry in
                    let pair = try shape(entry, fields: [1, 2])
                    return [pair[0], pair[1]]
                }
                image.flexibility = .enumerated(sizes)
            case I.imageSizeRange:
                let pair = try sizeRanges(reader.message(field, "imageSizeRange"), fields: [1, 2])
                image.flexibility = .ranges(width: pair[0], height: pair[1])
            default: continue
            }
        }
        return image
    }

    /// An ArrayFeatureType.
    static func array(_ message: ProtobufReader) throws -> CoreMLArray {
        var reader = message
        let A = Spec.ArrayFeatureType.self
        var array = CoreMLArray(dataType: NamedCode(0), shape: [], flexibility: nil)
        while let field = try reader.next() {
            switch field.number {
            case A.shape: array.shape += try dimensions(reader, field, "shape", already: array.shape.count)
            case A.dataType: array.dataType = NamedCode(try reader.int64(field, "dataType"))
            case A.enumeratedShapes:
                let shapes = try list(reader.message(field, "enumeratedShapes"), "shapes") { try shape($0, fields: [Spec.listValues]) }
                array.flexibility = .enumerated(shapes)
            case A.shapeRange:
                var ranges = try reader.message(field, "shapeRange")
                var each: [CoreMLSizeRange] = []
                while let entry = try ranges.next() {
                    guard entry.number == Spec.listValues else { continue }
                    guard each.count < maxRank else { throw ranges.fail("more than \(maxRank) size ranges") }
                    each.append(try sizeRange(ranges.message(entry, "sizeRanges[\(each.count)]")))
                }
                array.flexibility = .ranges(each)
            default: continue
            }
        }
        return array
    }
}

extension CoreMLFeatureReader {
    /// A DictionaryFeatureType's key type or a SequenceFeatureType's element type.
    static func scalar(_ message: ProtobufReader, int64: UInt32, string: UInt32) throws -> CoreMLScalar {
        var reader = message
        var scalar: CoreMLScalar?
        while let field = try reader.next() {
            if field.number == int64 { scalar = .int64 } else if field.number == string { scalar = .string }
        }
        guard let scalar else { throw message.fail("neither int64 nor string is set") }
        return scalar
    }

    /// A SequenceFeatureType: its element type and allowed lengths.
    static func sequence(_ message: ProtobufReader) throws -> CoreMLFeatureType {
        let S = Spec.SequenceFeatureType.self
        let element = try scalar(message, int64: S.int64Type, string: S.stringType)
        var reader = message
        var length: CoreMLSizeRange?
        while let field = try reader.next() {
            guard field.number == S.sizeRange else { continue }
            length = try sizeRange(reader.message(field, "sizeRange"))
        }
        return .sequence(element: element, length: length)
    }

    /// A StateFeatureType: its array.
    static func state(_ message: ProtobufReader) throws -> CoreMLFeatureType {
        var reader = message
        var array: CoreMLArray?
        while let field = try reader.next() {
            guard field.number == Spec.StateFeatureType.arrayType else { continue }
            array = try self.array(reader.message(field, "arrayType"))
        }
        guard let array else { throw message.fail("the state has no array type") }
        return .state(array)
    }

    /// A SizeRange: `upperBound` negative is unbounded.
    static func sizeRange(_ message: ProtobufReader) throws -> CoreMLSizeRange {
        var reader = message
        var lower: UInt64 = 0
        var upper: Int64 = -1
        while let field = try reader.next() {
            switch field.number {
            case Spec.SizeRange.lowerBound: lower = try reader.varint(field, "lowerBound")
            case Spec.SizeRange.upperBound: upper = try reader.int64(field, "upperBound")
            default: continue
            }
        }
        guard lower <= UInt64(Int64.max), let range = CoreMLSizeRange(lower: Int64(lower), upper: upper < 0 ? nil : upper) else {
            throw message.fail("size range \(lower)…\(upper) is empty")
        }
        return range
    }

    /// Two SizeRange fields of one message (an image's width and height ranges), each required.
    static func sizeRanges(_ message: ProtobufReader, fields: [UInt32]) throws -> [CoreMLSizeRange] {
        var reader = message
        var found: [UInt32: CoreMLSizeRange] = [:]
        while let field = try reader.next() {
            guard fields.contains(field.number) else { continue }
            found[field.number] = try sizeRange(reader.message(field, "range \(field.number)"))
        }
        return try fields.map { number in
            guard let range = found[number] else { throw message.fail("size range field \(number) is missing") }
            return range
        }
    }

    /// The dimensions listed in `fields` of one message (a Shape, an ImageSize), in field order.
    static func shape(_ message: ProtobufReader, fields: [UInt32]) throws -> [Int64] {
        var reader = message
        var byField: [UInt32: [Int64]] = [:]
        while let field = try reader.next() {
            guard fields.contains(field.number) else { continue }
            byField[field.number, default: []] += try dimensions(reader, field, "dimension", already: byField[field.number]?.count ?? 0)
        }
        // An ImageSize's fields are single values (0 when absent); a Shape's is a list.
        return fields.count == 1 ? byField[fields[0]] ?? [] : fields.map { byField[$0]?.last ?? 0 }
    }

    /// Each entry (field 1) of a list message, read by `read`; at most `maxShapes`.
    static func list<T>(_ message: ProtobufReader, _ name: String, _ read: (ProtobufReader) throws -> T) throws -> [T] {
        var reader = message
        var items: [T] = []
        while let field = try reader.next() {
            guard field.number == Spec.listValues else { continue }
            guard items.count < maxShapes else { throw reader.fail("more than \(maxShapes) \(name)") }
            items.append(try read(reader.message(field, "\(name)[\(items.count)]")))
        }
        return items
    }

    /// Dimensions of a repeated int64 field occurrence: each 0 or more, at most `maxRank` in all.
    static func dimensions(_ reader: ProtobufReader, _ field: ProtobufField, _ name: String, already: Int) throws -> [Int64] {
        let values = try reader.varints(field, name, limit: maxRank - already + 1).map { Int64(bitPattern: $0) }
        guard already + values.count <= maxRank else { throw reader.fail("\(name) has more than \(maxRank) dimensions") }
        if let bad = values.first(where: { $0 < 0 }) { throw reader.fail("\(name) has a negative dimension \(bad)") }
        return values
    }

    /// A width or height: 0 or more.
    static func size(_ reader: ProtobufReader, _ field: ProtobufField, _ name: String) throws -> Int64 {
        let value = try reader.int64(field, name)
        guard value >= 0 else { throw reader.fail("\(name) \(value) is negative") }
        return value
    }
}
