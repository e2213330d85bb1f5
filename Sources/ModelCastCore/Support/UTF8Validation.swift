import Foundation

/// The offset of the first byte that is not part of well-formed UTF-8 (RFC 3629: no
/// overlong forms, no surrogates, nothing above U+10FFFF), or nil when all of it is.
/// A broken or cut-short sequence is reported at its first byte.
func firstInvalidUTF8Offset(_ data: Data) -> Int? {
    data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Int? in
        let bytes = raw.bindMemory(to: UInt8.self)
        var i = 0
        let n = bytes.count
        while i < n {
            let b = bytes[i]
            if b < 0x80 { i += 1; continue }
            let length: Int
            var low: UInt8 = 0x80, high: UInt8 = 0xBF
            switch b {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; high = 0x9F
            case 0xF0: length = 4; low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; high = 0x8F
            default: return i
            }
            guard i + length <= n else { return i }
            // The second byte has the narrowed range; the others are plain continuation bytes.
            // A broken sequence is reported at its first byte (as Python's decoder does).
            guard (low...high).contains(bytes[i + 1]) else { return i }
            for k in 2..<length where !(0x80...0xBF).contains(bytes[i + k]) { return i }
            i += length
        }
        return nil
    }
}
