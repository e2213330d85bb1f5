import Foundation

/// Where a length-delimited field's bytes lie in its source.
struct ProtobufSpan: Sendable, Equatable {
    let start: UInt64
    let count: UInt64
}

/// One field of a protobuf message as it is on the wire.
struct ProtobufField {
    enum Value {
        case varint(UInt64)
        case fixed64(UInt64)
        case fixed32(UInt32)
        /// A string, bytes, a message or a packed repeated field: where it lies, not copied.
        case bytes(ProtobufSpan)
    }

    let number: UInt32
    let value: Value
}

/// Reads a protobuf message field by field (the wire format: varint, 64-bit, length-delimited
/// and 32-bit fields; groups are refused, as neither Core ML nor ONNX writes them). Hostile
/// input is refused with an error naming the file, the message and the byte, never trapped:
/// every length is checked against what is left of its message before it is used, varints
/// longer than 64 bits are refused, nesting is limited to `maxDepth` messages, and strings to
/// a caller's limit. A field's bytes are read only when the caller asks for them.
struct ProtobufReader {
    /// Nesting of messages a reader descends into. Core ML's deepest path modelcast reads
    /// (a classifier's label in an ML program) is about 17; pipelines and ONNX's nested
    /// types add a level each.
    static let maxDepth = 64

    let source: ProtobufSource
    /// Where this message is, for errors: `description.input[0].type`.
    let trail: String
    let depth: Int
    private let end: UInt64
    private(set) var offset: UInt64

    /// The whole source as one message.
    init(source: ProtobufSource, trail: String) {
        self.init(source: source, trail: trail, depth: 0, start: 0, end: source.size)
    }

    private init(source: ProtobufSource, trail: String, depth: Int, start: UInt64, end: UInt64) {
        self.source = source
        self.trail = trail
        self.depth = depth
        self.offset = start
        self.end = end
    }

    /// An error about this message.
    func fail(_ reason: String) -> ModelCastError {
        source.fail(trail.isEmpty ? reason : "\(trail): \(reason)")
    }

    /// The next field, or nil at the end of the message.
    mutating func next() throws -> ProtobufField? {
        guard offset < end else { return nil }
        let at = offset
        let tag = try varint("field tag")
        let number = tag >> 3
        guard number >= 1, number <= 536_870_911 else { throw fail("bad field number \(number) at byte \(at)") }
        let value: ProtobufField.Value
        switch tag & 7 {
        case 0: value = .varint(try varint("field \(number)"))
        case 1: value = .fixed64(try fixed(8, "field \(number)"))
        case 2:
            let length = try varint("length of field \(number)")
            guard length <= end - offset else {
                throw fail("field \(number) at byte \(at) claims \(length) bytes; its message has \(end - offset) left")
            }
            value = .bytes(ProtobufSpan(start: offset, count: length))
            offset += length
        case 5: value = .fixed32(UInt32(try fixed(4, "field \(number)")))
        case 3, 4: throw fail("field \(number) at byte \(at) is a group (wire type \(tag & 7)), which this format does not use")
        default: throw fail("field \(number) at byte \(at) has invalid wire type \(tag & 7)")
        }
        return ProtobufField(number: UInt32(number), value: value)
    }

    private mutating func varint(_ what: String) throws -> UInt64 {
        let start = offset
        var value: UInt64 = 0
        for index in 0..<10 {
            guard offset < end else { throw fail("truncated: the message ends inside the varint of \(what) at byte \(offset)") }
            let byte = try source.byte(at: offset)
            offset += 1
            // The tenth byte holds bit 63 only.
            guard index < 9 || byte <= 1 else { throw fail("the varint of \(what) at byte \(start) exceeds 64 bits") }
            value |= UInt64(byte & 0x7f) << (7 * UInt64(index))
            if byte & 0x80 == 0 { return value }
        }
        throw fail("the varint of \(what) at byte \(start) exceeds 64 bits")
    }

    private mutating func fixed(_ size: Int, _ what: String) throws -> UInt64 {
        guard UInt64(size) <= end - offset else { throw fail("truncated: the message ends inside \(what) at byte \(offset)") }
        let bytes = try source.bytes(at: offset, count: size)
        offset += UInt64(size)
        return bytes.reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }
}

extension ProtobufReader {
    /// The embedded message in `field`, named `name` in errors.
    func message(_ field: ProtobufField, _ name: String) throws -> ProtobufReader {
        let span = try self.span(field, name)
        guard depth < Self.maxDepth else { throw fail("\(name): messages nested more than \(Self.maxDepth) deep") }
        return ProtobufReader(source: source, trail: trail.isEmpty ? name : trail + "." + name, depth: depth + 1,
                              start: span.start, end: span.start + span.count)
    }

    /// Where a length-delimited field lies; any other wire type is refused.
    func span(_ field: ProtobufField, _ name: String) throws -> ProtobufSpan {
        guard case .bytes(let span) = field.value else {
            throw fail("\(name) (field \(field.number)) is not length-delimited")
        }
        return span
    }

    /// The UTF-8 text of a string field, at most `limit` bytes.
    func string(_ field: ProtobufField, _ name: String, limit: Int = 4096) throws -> String {
        let span = try self.span(field, name)
        guard span.count <= UInt64(limit) else { throw fail("\(name) is \(span.count) bytes long (at most \(limit) read)") }
        let bytes = try source.bytes(at: span.start, count: Int(span.count))
        guard let text = String(validating: bytes, as: UTF8.self) else { throw fail("\(name) is not valid UTF-8") }
        return text
    }

    /// A varint field's value; any other wire type is refused.
    func varint(_ field: ProtobufField, _ name: String) throws -> UInt64 {
        guard case .varint(let value) = field.value else { throw fail("\(name) (field \(field.number)) is not a varint") }
        return value
    }

    /// An int64 (or int32, sign-extended on the wire) field's value.
    func int64(_ field: ProtobufField, _ name: String) throws -> Int64 {
        Int64(bitPattern: try varint(field, name))
    }

    /// Each value of a repeated varint field occurrence: packed (length-delimited) or one value.
    func forEachVarint(_ field: ProtobufField, _ name: String, _ body: (UInt64) throws -> Void) throws {
        if case .varint(let value) = field.value { return try body(value) }
        let span = try self.span(field, name)
        var packed = ProtobufReader(source: source, trail: trail, depth: depth, start: span.start, end: span.start + span.count)
        while packed.offset < packed.end { try body(try packed.varint(name)) }
    }

    /// The values of a repeated varint field occurrence, at most `limit` (a hostile count
    /// cannot grow memory).
    func varints(_ field: ProtobufField, _ name: String, limit: Int) throws -> [UInt64] {
        var values: [UInt64] = []
        try forEachVarint(field, name) { value in
            guard values.count < limit else { throw fail("\(name) has more than \(limit) values") }
            values.append(value)
        }
        return values
    }
}
