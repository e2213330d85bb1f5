import Foundation

/// A JSON reader for documents every client must read the same way (a key set): RFC 8259
/// with no leniency, so two implementations cannot see two different documents in one set
/// of signed bytes. Foundation's decoders keep the first of two equal keys and
/// JSONSerialization the last, and both read `1.0` and `1e2` as integers; here a repeated
/// key is refused and a number is an integer only when written as one (`-?(0|[1-9][0-9]*)`).
/// Also refused: bytes that are not UTF-8, a byte-order mark, control characters inside
/// strings, lone surrogate escapes, nesting deeper than `maxDepth`, text after the value.
///
/// Errors are `ManifestValueError`s naming the JSON path reached and the byte offset.
enum StrictJSON {
    /// Objects and arrays nested deeper than this are refused (a key set nests 3 levels).
    static let maxDepth = 8

    /// Parses `data` into a value whose objects keep the document's key order.
    static func parse(_ data: Data) throws -> JSONValue {
        let bytes = [UInt8](data)
        // Invalid UTF-8 decodes to U+FFFD, so a round trip that changes the bytes found some.
        guard Array(String(decoding: bytes, as: UTF8.self).utf8) == bytes else {
            throw ManifestValueError(field: "(document)", value: "", rule: "is not UTF-8 text")
        }
        var reader = Reader(bytes: bytes)
        reader.skipSpace()
        let value = try reader.value(path: "", depth: 0)
        reader.skipSpace()
        guard reader.offset == bytes.count else { throw reader.syntax("", "text after the end of the JSON value") }
        return value
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        mutating func skipSpace() {
            while offset < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[offset]) { offset += 1 }
        }

        func syntax(_ path: String, _ problem: String) -> ManifestValueError {
            let excerpt = String(decoding: bytes[offset..<min(bytes.count, offset + 24)], as: UTF8.self)
            let at = offset < bytes.count ? "\(problem) at byte \(offset)" : "\(problem): the document ends at byte \(offset)"
            return ManifestValueError(field: path.isEmpty ? "(document)" : path, value: quotedValue(excerpt), rule: "is not JSON (\(at))")
        }

        mutating func value(path: String, depth: Int) throws -> JSONValue {
            guard offset < bytes.count else { throw syntax(path, "a value is missing") }
            switch bytes[offset] {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                guard depth < StrictJSON.maxDepth else {
                    throw ManifestValueError(field: path.isEmpty ? "(document)" : path, value: "",
                                             rule: "nests arrays and objects deeper than \(StrictJSON.maxDepth) levels")
                }
                return bytes[offset] == UInt8(ascii: "{") ? try object(path: path, depth: depth + 1) : try array(path: path, depth: depth + 1)
            case UInt8(ascii: "\""): return .string(try string(path: path))
            case UInt8(ascii: "t"): return try literal("true", .bool(true), path: path)
            case UInt8(ascii: "f"): return try literal("false", .bool(false), path: path)
            case UInt8(ascii: "n"): return try literal("null", .null, path: path)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number(path: path)
            default: throw syntax(path, "unexpected character")
            }
        }

        mutating func literal(_ word: String, _ result: JSONValue, path: String) throws -> JSONValue {
            let expected = Array(word.utf8)
            guard bytes[offset...].starts(with: expected) else { throw syntax(path, "unexpected character") }
            offset += expected.count
            return result
        }

        mutating func object(path: String, depth: Int) throws -> JSONValue {
            offset += 1
            var members: [JSONValue.Member] = []
            var seen = Set<String>()
            skipSpace()
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "}") { offset += 1; return .object([]) }
            while true {
                skipSpace()
                guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") else { throw syntax(path, "expected a key in quotes") }
                let key = try string(path: path)
                let memberPath = path.isEmpty ? key : path + "." + key
                guard seen.insert(key).inserted else {
                    throw ManifestValueError(field: memberPath, value: quotedValue(key),
                                             rule: "appears twice in one object (readers would disagree on which one counts)")
                }
                skipSpace()
                guard offset < bytes.count, bytes[offset] == UInt8(ascii: ":") else { throw syntax(memberPath, "expected ':'") }
                offset += 1
                skipSpace()
                members.append(.init(key, try value(path: memberPath, depth: depth)))
                skipSpace()
                guard offset < bytes.count else { throw syntax(path, "expected ',' or '}'") }
                if bytes[offset] == UInt8(ascii: ",") { offset += 1; continue }
                if bytes[offset] == UInt8(ascii: "}") { offset += 1; return .object(members) }
                throw syntax(path, "expected ',' or '}'")
            }
        }

        mutating func array(path: String, depth: Int) throws -> JSONValue {
            offset += 1
            var items: [JSONValue] = []
            skipSpace()
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "]") { offset += 1; return .array([]) }
            while true {
                skipSpace()
                items.append(try value(path: "\(path)[\(items.count)]", depth: depth))
                skipSpace()
                guard offset < bytes.count else { throw syntax(path, "expected ',' or ']'") }
                if bytes[offset] == UInt8(ascii: ",") { offset += 1; continue }
                if bytes[offset] == UInt8(ascii: "]") { offset += 1; return .array(items) }
                throw syntax(path, "expected ',' or ']'")
            }
        }

        /// An integer literal becomes `.int` when it fits 64 bits; a fraction, an exponent or a
        /// larger integer becomes `.double`, which every field of a key set refuses by name.
        mutating func number(path: String) throws -> JSONValue {
            let start = offset
            if bytes[offset] == UInt8(ascii: "-") { offset += 1 }
            guard offset < bytes.count, isDigit(bytes[offset]) else { throw syntax(path, "a number needs digits") }
            if bytes[offset] == UInt8(ascii: "0") {
                offset += 1
                if offset < bytes.count, isDigit(bytes[offset]) { throw syntax(path, "a number has no leading zeros") }
            } else {
                while offset < bytes.count, isDigit(bytes[offset]) { offset += 1 }
            }
            var integral = true
            if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
                integral = false
                offset += 1
                guard offset < bytes.count, isDigit(bytes[offset]) else { throw syntax(path, "a fraction needs digits") }
                while offset < bytes.count, isDigit(bytes[offset]) { offset += 1 }
            }
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E") {
                integral = false
                offset += 1
                if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") { offset += 1 }
                guard offset < bytes.count, isDigit(bytes[offset]) else { throw syntax(path, "an exponent needs digits") }
                while offset < bytes.count, isDigit(bytes[offset]) { offset += 1 }
            }
            let text = String(decoding: bytes[start..<offset], as: UTF8.self)
            if integral, let value = Int64(text) { return .int(value) }
            return .double(Double(text) ?? .infinity)
        }

        mutating func string(path: String) throws -> String {
            offset += 1
            var scalars = String.UnicodeScalarView()
            var runStart = offset
            func flush(_ end: Int) { scalars.append(contentsOf: String(decoding: bytes[runStart..<end], as: UTF8.self).unicodeScalars) }
            while true {
                guard offset < bytes.count else { throw syntax(path, "a string is not closed") }
                let byte = bytes[offset]
                if byte == UInt8(ascii: "\"") {
                    flush(offset)
                    offset += 1
                    return String(scalars)
                }
                if byte < 0x20 { throw syntax(path, "a control character inside a string must be escaped") }
                guard byte == UInt8(ascii: "\\") else { offset += 1; continue }
                flush(offset)
                offset += 1
                guard offset < bytes.count else { throw syntax(path, "a string is not closed") }
                let escape = bytes[offset]
                offset += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    var unit = try hex4(path: path)
                    if (0xD800...0xDBFF).contains(unit) {
                        guard bytes[offset...].starts(with: Array("\\u".utf8)) else { throw syntax(path, "a lone surrogate escape") }
                        offset += 2
                        let low = try hex4(path: path)
                        guard (0xDC00...0xDFFF).contains(low) else { throw syntax(path, "a lone surrogate escape") }
                        unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(unit) else { throw syntax(path, "a lone surrogate escape") }
                    scalars.append(scalar)
                default: throw syntax(path, "an unknown escape")
                }
                runStart = offset
            }
        }

        mutating func hex4(path: String) throws -> UInt32 {
            guard offset + 4 <= bytes.count, let value = UInt32(String(decoding: bytes[offset..<offset + 4], as: UTF8.self), radix: 16),
                  bytes[offset..<offset + 4].allSatisfy({ isHexDigit($0) }) else {
                throw syntax(path, "\\u needs four hexadecimal digits")
            }
            offset += 4
            return value
        }

        func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        func isHexDigit(_ byte: UInt8) -> Bool {
            isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
        }
    }
}
