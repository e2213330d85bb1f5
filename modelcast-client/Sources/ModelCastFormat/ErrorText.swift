import Foundation

/// The text of a C `errno` value, e.g. "Permission denied".
public func errnoDescription(_ code: Int32 = errno) -> String {
    String(cString: strerror(code))
}

/// True when `text` holds a C0 control character or DEL (U+0000–U+001F, U+007F).
public func containsControlCharacter(_ text: String) -> Bool {
    text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
}

/// `text` with every control character written as an escape (`\n`, `\t`, `\r`,
/// `\u{1B}`), so a message naming it stays on one line and shows what is there.
public func escapingControlCharacters(_ text: String) -> String {
    var result = ""
    for scalar in text.unicodeScalars {
        switch scalar.value {
        case 0x0A: result += "\\n"
        case 0x09: result += "\\t"
        case 0x0D: result += "\\r"
        case 0..<0x20, 0x7F: result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
        default: result.unicodeScalars.append(scalar)
        }
    }
    return result
}

