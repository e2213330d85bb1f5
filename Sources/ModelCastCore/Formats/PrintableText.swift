/// Text read from a model file (GGUF keys, tensor names and values, Core ML manifest
/// fields) as it may be shown on a terminal: control and format characters are
/// escaped as `\u{1B}`, so a hostile model cannot move the cursor, retitle the
/// window or reorder the line it is shown in. Other text is unchanged.
func printable(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: isUnprintable) else { return text }
    var out = ""
    for scalar in text.unicodeScalars {
        if isUnprintable(scalar) {
            out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
        } else {
            out.unicodeScalars.append(scalar)
        }
    }
    return out
}

private func isUnprintable(_ scalar: Unicode.Scalar) -> Bool {
    if scalar.isASCII { return scalar.value < 0x20 || scalar.value == 0x7F }
    switch scalar.properties.generalCategory {
    case .control, .format: return true
    default: return false
    }
}
