import Foundation

/// How a zip's names and values are written in `ZipProblem` messages, and the arithmetic
/// on hostile values every part of the reader shares.
enum ZipText {
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

    /// The bytes as UTF-8 text, or nil when they are not valid UTF-8.
    static func utf8(_ bytes: [UInt8]) -> String? {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
            return String(validating: bytes, as: UTF8.self)
        }
        // Decoding replaces invalid bytes, so only a valid name round-trips unchanged.
        let text = String(decoding: bytes, as: UTF8.self)
        return text.utf8.elementsEqual(bytes) ? text : nil
    }
}
