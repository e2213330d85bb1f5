import Foundation

/// The offset of the first byte of `bytes` that does not start a well-formed UTF-8
/// sequence (an unexpected continuation byte, a truncated or overlong sequence, a
/// surrogate or a code point past U+10FFFF), nil when every byte is UTF-8.
func firstInvalidUTF8(in bytes: [UInt8]) -> Int? {
    var index = 0
    while index < bytes.count {
        let lead = bytes[index]
        if lead < 0x80 { index += 1; continue }
        // The sequence's length and the range its second byte must be in (Unicode 15, table 3-7).
        let length: Int, second: ClosedRange<UInt8>
        switch lead {
        case 0xC2...0xDF: (length, second) = (2, 0x80...0xBF)
        case 0xE0: (length, second) = (3, 0xA0...0xBF)
        case 0xE1...0xEC, 0xEE...0xEF: (length, second) = (3, 0x80...0xBF)
        case 0xED: (length, second) = (3, 0x80...0x9F)
        case 0xF0: (length, second) = (4, 0x90...0xBF)
        case 0xF1...0xF3: (length, second) = (4, 0x80...0xBF)
        case 0xF4: (length, second) = (4, 0x80...0x8F)
        default: return index
        }
        guard index + length <= bytes.count, second.contains(bytes[index + 1]),
              bytes[(index + 2)..<(index + length)].allSatisfy({ (0x80...0xBF).contains($0) }) else { return index }
        index += length
    }
    return nil
}
