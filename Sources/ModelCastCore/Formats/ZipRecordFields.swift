import Foundation

/// Reading a zip's little-endian records, and how its values are named in problems.
extension ZipInspector {
    static func invalid(_ source: some RandomAccessBytes, _ reason: String) -> ModelCastError {
        .invalidModel(path: source.name, format: "zip", reason: reason)
    }

    static func readExactly(_ source: some RandomAccessBytes, offset: Int64, count: Int, what: String) async throws -> [UInt8] {
        let bytes = try await source.read(offset: offset, count: count)
        guard bytes.count >= count else {
            throw invalid(source, "\(what) at offset \(offset) is cut short: \(bytes.count) of \(count) bytes (the archive is truncated or changed while being read)")
        }
        // A source that returns more (a server ignoring the Range header) must not shift the fields.
        return bytes.count == count ? bytes : Array(bytes.prefix(count))
    }

    /// `entry "NAME"`; an empty name also gets its position, since "" alone names nothing.
    static func entryLabel(_ name: String, index: Int) -> String {
        if name.isEmpty { return "entry #\(index + 1) \"\"" }
        return "entry \(quoted(name))"
    }

    /// The name in double quotes, with control and format characters escaped so a
    /// hostile name cannot drive the terminal or reorder the text it is shown in.
    static func quoted(_ name: String) -> String {
        var out = "\""
        for scalar in name.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format: out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let digits = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    static func hex(_ value: UInt32) -> String { String(format: "0x%08x", value) }
    static func hex16(_ value: UInt16) -> String { String(format: "0x%04x", value) }
    static func octal(_ mode: UInt32) -> String { "0o" + String(mode, radix: 8) }

    static func fileTypeName(_ type: UInt32) -> String {
        switch type {
        case 0o010000: return "FIFO"
        case 0o020000: return "character device"
        case 0o060000: return "block device"
        case 0o140000: return "socket"
        default: return "unknown file type"
        }
    }

    static func methodName(_ method: UInt16) -> String {
        switch method {
        case 1...6: return "legacy"
        case 9: return "deflate64"
        case 12: return "bzip2"
        case 14: return "LZMA"
        case 93: return "zstd"
        case 95: return "xz"
        case 99: return "AES encryption"
        default: return "unknown"
        }
    }

    /// `a + b`, or `Int64.max` if that overflows.
    static func saturatingAdd(_ a: Int64, _ b: Int64) -> Int64 {
        let sum = a.addingReportingOverflow(b)
        return sum.overflow ? Int64.max : sum.partialValue
    }

    /// Little-endian fields of a zip record. Callers check lengths before reading.
    struct Fields {
        let bytes: [UInt8]
        init(_ bytes: [UInt8]) { self.bytes = bytes }
        var count: Int { bytes.count }
        func u16(_ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }
        func u32(_ at: Int) -> UInt32 { UInt32(u16(at)) | UInt32(u16(at + 2)) << 16 }
        func u64(_ at: Int) -> UInt64 { UInt64(u32(at)) | UInt64(u32(at + 4)) << 32 }
    }
}
